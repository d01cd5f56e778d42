"""Tests of the drover Python client: run by test/python/client.test.ts, or `python3 -m unittest` here."""
