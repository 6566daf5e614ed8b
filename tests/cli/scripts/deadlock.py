# Blocked forever: the only thread reads a pipe that nobody will ever write.
import os
r, w = os.pipe()
os.read(r, 1)
