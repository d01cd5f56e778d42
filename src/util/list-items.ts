/**
 * The items of a comma-separated list, as every list option reads them (tasklists, `--after`): blanks around
 * the list and around each item are not part of it, so ` 3, 5 ` is `3` and `5`. An empty item stays '' for the
 * caller to refuse by name (`1,` is `1` and ''); a blank list is [''].
 */
export function listItems(text: string): string[] {
  return text
    .trim()
    .split(',')
    .map((item) => item.trim());
}
