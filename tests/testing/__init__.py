"""What the tests of every room share (the model is pre-commit's `testing/`)."""
