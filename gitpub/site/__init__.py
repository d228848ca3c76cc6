"""What site generators expect of an article: front matter, paths, validation, detection."""
