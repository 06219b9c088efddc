"""Analysis: symbol declarations, diffs, risks and rules."""
