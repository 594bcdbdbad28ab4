"""Checks every relative Markdown link in README.md and docs/src/**/*.md: its file exists (inside the
book for the book's pages) and its #anchor is a heading there. Exits 1 naming each broken link."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BOOK = ROOT / "docs" / "src"
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def prose(path):
    """The file's lines outside fenced code: (line number, the line, the line with inline code blanked)."""
    fence = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        mark = re.match(r"^\s*(```+|~~~+)", line)
        if mark and (fence is None or mark.group(1).startswith(fence)):
            fence = None if fence else mark.group(1)
            continue
        if fence is None:
            yield number, line, re.sub(r"(`+)(?:(?!\1).)+?\1", lambda m: " " * len(m.group(0)), line)


def slug(text):
    """The anchor GitHub and mdBook give a heading: its text lower-cased, spaces to '-', other
    punctuation dropped (letters, digits, '-' and '_' kept)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link's text only
    text = re.sub(r"<[^>]+>|[`*]", "", text).strip().lower()
    return "".join("-" if c.isspace() else c for c in text if c.isalnum() or c in "-_" or c.isspace())


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        for _, line, _ in prose(path):
            found.update(re.findall(r"""\b(?:id|name)=["']([^"']+)["']""", line))
            heading = HEADING.match(line)
            if heading:
                explicit = re.search(r"\{#([^}\s]+)\}\s*$", heading.group(2))
                base = explicit.group(1) if explicit else slug(heading.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
        cache[path] = found
    return cache[path]


def broken(path):
    for number, _, line in prose(path):
        targets = [m.group(1) for m in LINK.finditer(line)] + [m.group(1) for m in [REF.match(line)] if m]
        for target in targets:
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # external (http:, https:, mailto:): not fetched
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            where = f"{path.relative_to(ROOT)}:{number}: {target}"
            if not dest.exists():
                yield f"{where}: no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}"
            elif path.is_relative_to(BOOK) and not dest.is_relative_to(BOOK):
                yield f"{where}: leaves the book (docs/src), so the built book cannot follow it"
            elif anchor and (dest.suffix != ".md" or anchor not in anchors(dest)):
                yield f"{where}: no heading #{anchor} in {dest.relative_to(ROOT)}"


if __name__ == "__main__":
    pages = [ROOT / "README.md", *sorted(BOOK.rglob("*.md"))]
    problems = [problem for page in pages for problem in broken(page)]
    print("\n".join(problems) or f"links: {len(pages)} files, every relative link leads somewhere")
    sys.exit(1 if problems else 0)
