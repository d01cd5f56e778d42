"""FAKE pandas: a stand-in the client's tests put on sys.path to see how the client calls pandas.DataFrame.

It is not pandas and does nothing pandas does; it records its arguments. pandas is not installed on the test
machines, and the client must work both with it and without it.
"""

FAKE = True


class DataFrame:
    """Records the rows and columns it was made from."""

    def __init__(self, data=None, columns=None):
        self.data = list(data or [])
        self.columns = list(columns or [])

    def __len__(self):
        return len(self.data)
