"""The hostile corpus of generated code and its outer-process harness."""
