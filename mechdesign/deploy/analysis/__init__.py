"""Analysis: decoding released outputs, assessing a file's guarantee on data, and the data check against the ball."""
