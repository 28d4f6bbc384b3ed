#!/usr/bin/env python3
# Embed a Lua file as a C string: embed.py NAME IN OUT
import sys
name, src, out = sys.argv[1:4]
data = open(src, encoding="utf-8").read()
with open(out, "w", encoding="utf-8") as f:
    f.write("/* generated from %s */\n" % src.split("/")[-1])
    f.write("static const char %s[] =\n" % name)
    for line in data.splitlines(True):
        esc = line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        f.write('    "%s"\n' % esc)
    f.write("    ;\n")
