"""Text checks shared by the source tests and the built-page tests."""
import re

# English: "the notes", "the course notes", "the slides' seed", "course notebook", ...
ENGLISH = re.compile(
    r"\b(?:the|these|those|its|their|our)\s+(?:course\s+)?(?:notes|slides)\b|\bcourse\s+notebooks?\b"
    r"|\b(?:notes|slides)'|\bthe course\b|\blecture notes\b",
    re.IGNORECASE,
)
# Spanish: «los apuntes», «las diapositivas», «el curso», «del curso».
SPANISH = re.compile(r"\bapuntes\b|\bdiapositivas?\b|\b(?:el|del|al|este|un)\s+curso\b", re.IGNORECASE)
UNSEEN = re.compile(f"{ENGLISH.pattern}|{SPANISH.pattern}", re.IGNORECASE)


def mentions(text):
    """The phrases of ``text`` that point at unseen notes, slides or a course (the book stands alone)."""
    return [m.group(0) for m in UNSEEN.finditer(text)]
