# cmake -DIN=FILE -DOUT=FILE.inc -DNAME=symbol -P EmbedFile.cmake: writes FILE's bytes as
# `static const unsigned char NAME[] = {...};` for a C++ source to #include.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n  " bytes "${bytes}")
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by cmake/EmbedFile.cmake: do not edit.\nstatic const unsigned char ${NAME}[] = {\n  ${bytes}\n};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
