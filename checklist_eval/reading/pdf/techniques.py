"""The ways a PDF hides text from its reader, by the name a :class:`HiddenRun` carries.

Plain data, apart from the modules that need PDFium: a batch's parent process describes what its
parsing workers found (records' manipulation flag, reports) without loading the PDF library.
"""

from __future__ import annotations

# Effective font size below which text is not read. Genuine papers go down to about 2.4 pt (sub-
# scripts in a scaled-down plot); a hidden sentence is set at 1 pt or less.
READABLE_PT = 1.5

TECHNIQUES = {
    "invisible": "render mode 3, invisible",
    "clip": "render mode 7, clip only",
    "transparent": "transparent fill",
    "background": "same colour as the background",
    "tiny": f"font under {READABLE_PT:g} pt",
    "off_page": "outside the page",
    "covered": "covered by a shape",
    "optional": "optional content switched off",
}
