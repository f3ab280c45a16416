#!/usr/bin/env python3
"""Crafts the worst inputs for the decoder's work bound (docs/performance.md, "Bounded work per byte").

usage: craft-bombs.py BASE.etl OUTDIR

BASE.etl is any trace (`swapstream generate`): its header buffer starts every file made here.
  issue52-N.etl   issue 52's bomb: N buffers of 88 bytes, each claiming 64 MiB of zeros
  zeros-N.etl     the logger's BufferSize raised to 16 MiB, two buffers claiming 16 MiB each (the slack), then
                  N buffers of 88 bytes each claiming 64 times its size of zeros: the most the bound lets through
  events-N.etl    as zeros-N, but what the buffers expand to is the base trace's own events, repeated: the
                  expansion is decoded as switches, not skipped as a zero marker
"""
import struct, sys, os

def header(b, size, fill, flags, type_):
    h = bytearray(b[:0x48])
    struct.pack_into('<I', h, 0, size)
    struct.pack_into('<I', h, 0x30, fill)
    struct.pack_into('<H', h, 0x34, flags)
    struct.pack_into('<H', h, 0x36, type_)
    return h

def match(distance, total):
    """One XPRESS match of {total} bytes at {distance}, in the 32-bit length form."""
    return struct.pack('<HBBHI', (distance - 1) << 3 | 7, 0x0F, 0xFF, 0, total - 3)

def compressed(base, literal, claim):
    """A compressed buffer: {literal} as literals, then a match repeating it up to {claim} bytes of data."""
    out = bytearray()
    items = list(literal)
    flags_at = None
    n = 0
    for x in items:
        if n % 32 == 0:
            flags_at = len(out)
            out += b'\0\0\0\0'
        out.append(x)
        n += 1
    if n % 32 == 0:
        flags_at = len(out)
        out += b'\0\0\0\0'
    # the next flag bit marks the match
    bit = 31 - n % 32
    v = struct.unpack_from('<I', out, flags_at)[0] | 1 << bit
    struct.pack_into('<I', out, flags_at, v)
    out += match(len(literal), claim - 0x48 - len(literal))
    return header(base, 0x48 + len(out), claim, 0x40, 0) + out

def main():
    base_path, outdir = sys.argv[1], sys.argv[2]
    base = open(base_path, 'rb').read()
    first = struct.unpack_from('<I', base, 0)[0]
    head = bytearray(base[:first])
    second = base[first:2 * first]
    fill2 = struct.unpack_from('<I', second, 0x30)[0]
    # whole events from the start of the base's second buffer, about 2 KiB of them
    p, events = 0x48, 0x48
    while p < fill2 and p - 0x48 < 2048:
        marker = struct.unpack_from('<I', second, p)[0]
        size = struct.unpack_from('<H', second, p + 4)[0] if (marker >> 16 & 0xFF) in (1, 2, 0x11, 0x12) else marker & 0xFFFF
        if size == 0: break
        p += (size + 7) & ~7
        events = p
    literal = second[0x48:events]
    big = bytearray(head)
    struct.pack_into('<I', big, 0x68, 16 << 20)  # the logfile header's BufferSize
    os.makedirs(outdir, exist_ok=True)
    for n in (200, 2000):
        with open(os.path.join(outdir, 'issue52-%d.etl' % n), 'wb') as f:
            f.write(head)
            for _ in range(n): f.write(compressed(second, b'\0', 64 << 20))
    for n in (200, 2000, 100000):
        for name, lit in (('zeros', b'\0'), ('events', literal)):
            with open(os.path.join(outdir, '%s-%d.etl' % (name, n)), 'wb') as f:
                f.write(big)
                whole = 0x48 + ((16 << 20) - 0x48) // len(lit) * len(lit)
                f.write(compressed(second, lit, whole)); f.write(compressed(second, lit, whole))
                small = len(compressed(second, lit, 0x48 + len(lit) + 64))
                for _ in range(n):
                    # what the bound lets this buffer claim: 64 times the bytes so far, less what came out
                    # whole copies of the literal: events end at the fill mark
                    claim = max(len(lit) + 64, 64 * small - 0x48)
                    f.write(compressed(second, lit, 0x48 + claim // len(lit) * len(lit)))

main()
