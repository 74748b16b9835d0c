/**
 * Styles that hide an element from the eye but not from screen readers (a table header
 * that only names a column of icon buttons, say).
 */
// Strings, not numbers: in `sx` a width or height of 1 means 100%.
export const visuallyHidden = {
  border: 0,
  clip: 'rect(0 0 0 0)',
  height: '1px',
  margin: '-1px',
  overflow: 'hidden',
  padding: 0,
  position: 'absolute',
  whiteSpace: 'nowrap',
  width: '1px',
} as const;
