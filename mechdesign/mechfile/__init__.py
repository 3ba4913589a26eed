"""The file and its guarantee: the mechanism file format, its canonical bytes, signatures and keys, record files."""
