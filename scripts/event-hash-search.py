#!/usr/bin/env python3
"""The search behind the perfect hash of event names (include/keyhook/events.hpp).

find_event_type maps a name to its slot with detail::event_slot:

    key  = len(name) << 16 | name[0] << 8 | name[len(name) // 2]     (32 bits)
    slot = (key * event_slot_multiplier mod 2**32) >> (32 - event_slot_bits)

and a static_assert refuses the build when two names share a slot. This script
reads the names from the table the code uses (detail::event_rows
in events.hpp) and the current parameters, says whether they are still
collision-free, and finds a multiplier that is: odd 32-bit values from a
seeded generator, tried in turn (about one in 300,000 fits 53 names into 128
slots, a second or two). The output is reproducible: the same names, bits and
seed give the same multiplier.

    python3 scripts/event-hash-search.py            # check the header, print a multiplier
    python3 scripts/event-hash-search.py --write    # after adding an event: fix the header
    python3 scripts/event-hash-search.py --check    # exit 1 when the header's hash has a collision

Python 3.6 or later, standard library only.
"""

import argparse
import random
import re
import sys
from pathlib import Path

DEFAULT_HEADER = Path(__file__).resolve().parent.parent / "include" / "keyhook" / "events.hpp"
MULTIPLIER_RE = re.compile(r"(inline constexpr std::uint32_t event_slot_multiplier = )0x([0-9A-Fa-f]+)u;")
BITS_RE = re.compile(r"(inline constexpr unsigned event_slot_bits = )(\d+);")
COUNT_RE = re.compile(r"inline constexpr std::size_t event_type_count = (\d+);")


def read_names(text):
    """The wire names of detail::event_rows ({enumerator, name, meaning}), in table order."""
    start = text.find("event_row event_rows[] = {")
    if start < 0:
        sys.exit("event-hash-search: no event_rows table in the header")
    end = text.find("};", start)
    names = re.findall(r'\{event_type::\w+,\s*"((?:[^"\\]|\\.)*)"', text[start:end])
    if not names:
        sys.exit("event-hash-search: the event_rows table is empty")
    return names


def event_key(name):
    """detail::event_slot's key: length, first byte and middle byte."""
    b = name.encode("utf-8")
    return (len(b) << 16 | b[0] << 8 | b[len(b) // 2]) & 0xFFFFFFFF


def is_perfect(keys, multiplier, bits):
    """True when no two keys share a slot."""
    shift = 32 - bits
    seen = set()
    for k in keys:
        slot = ((k * multiplier) & 0xFFFFFFFF) >> shift
        if slot in seen:
            return False
        seen.add(slot)
    return True


def search(keys, bits, seed, tries):
    rng = random.Random(seed)
    for attempt in range(1, tries + 1):
        multiplier = rng.getrandbits(32) | 1
        if is_perfect(keys, multiplier, bits):
            return multiplier, attempt
    return None, tries


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--header", type=Path, default=DEFAULT_HEADER, help="events.hpp (default: %(default)s)")
    parser.add_argument("--bits", type=int, help="table of 2**bits slots (default: the header's event_slot_bits)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the candidate sequence (default: 1)")
    parser.add_argument("--tries", type=int, default=20_000_000, help="candidates to try (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="only check the header's parameters (exit 1 if not perfect)")
    parser.add_argument("--write", action="store_true",
                        help="when the header's parameters are not perfect (or --bits differs), write the ones found")
    args = parser.parse_args()

    text = args.header.read_text(encoding="utf-8")
    names = read_names(text)
    count = COUNT_RE.search(text)
    if count and int(count.group(1)) != len(names):
        print(f"note: event_type_count is {count.group(1)} but the table lists {len(names)} names", file=sys.stderr)
    if len(set(names)) != len(names):
        sys.exit("event-hash-search: the table lists a name twice")

    keys = [event_key(n) for n in names]
    by_key = {}
    for name, key in zip(names, keys):
        by_key.setdefault(key, []).append(name)
    clashes = [group for group in by_key.values() if len(group) > 1]
    if clashes:
        for group in clashes:
            print("same length, first and middle byte: " + ", ".join(group), file=sys.stderr)
        sys.exit("event-hash-search: no multiplier can separate these names; event_slot needs another key")

    m = MULTIPLIER_RE.search(text)
    b = BITS_RE.search(text)
    if not m or not b:
        sys.exit("event-hash-search: cannot find event_slot_multiplier and event_slot_bits in the header")
    current, current_bits = int(m.group(2), 16), int(b.group(2))
    bits = args.bits if args.bits is not None else current_bits
    if not 1 <= bits <= 16 or (1 << bits) < len(names):
        sys.exit(f"event-hash-search: {len(names)} names need a table of at least {len(names)} slots")

    current_ok = is_perfect(keys, current, current_bits)
    print(f"{len(names)} names; the header's multiplier 0x{current:08X} with {current_bits} bits "
          f"({1 << current_bits} slots) is {'perfect' if current_ok else 'NOT perfect'}")
    if args.check:
        return 0 if current_ok else 1
    if args.write and current_ok and bits == current_bits:
        print("the header is unchanged")
        return 0

    found, attempts = search(keys, bits, args.seed, args.tries)
    if found is None:
        sys.exit(f"event-hash-search: no multiplier in {attempts} tries; try another --seed or --bits {bits + 1}")
    print(f"multiplier 0x{found:08X}, bits {bits} ({1 << bits} slots), found at try {attempts} (seed {args.seed})")

    if args.write:
        text = MULTIPLIER_RE.sub(lambda g: f"{g.group(1)}0x{found:08X}u;", text, count=1)
        text = BITS_RE.sub(lambda g: f"{g.group(1)}{bits};", text, count=1)
        args.header.write_text(text, encoding="utf-8")
        print(f"wrote event_slot_multiplier = 0x{found:08X}u and event_slot_bits = {bits} to {args.header}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
