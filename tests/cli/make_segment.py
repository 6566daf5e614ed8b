# Writes a file that looks like a vtime segment but is not a valid one, for the attach tests.
# make_segment.py PATH bad-magic|bad-version|short
import struct
import sys

path, kind = sys.argv[1], sys.argv[2]
magic = 0x31454D4954565F56
if kind == "short":
    data = b"\0" * 16
else:
    if kind == "bad-magic":
        magic ^= 0xFF
    version = 99 if kind == "bad-version" else 1
    data = struct.pack("<QIIQ", magic, version, 64, 4096) + b"\0" * 4072
with open(path, "wb") as f:
    f.write(data)
