from mechdesign.cli import entry_point

entry_point()
