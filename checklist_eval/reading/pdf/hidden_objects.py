"""Which text objects of a PDF page a reader cannot see, and how each is hidden.

Each text object of a page is classified once, through pdfium's raw API (one call per property, per
object: a LaTeX PDF shows a whole line per object, so a page costs a few hundred calls, not one per
character):

* render mode 3 (invisible: OCR layers use it) or 7 (adds to the clip path, paints nothing);
* fill alpha under 10 %;
* fill colour equal to the colour under it: the topmost filled shape drawn before it under its box's
  centre, else the white page (an image or shading there: unknown colours, counted as seen). Pages
  without a non-white filled shape take the fast path; near-white text is checked once more against
  the shapes inside figures before it is called hidden;
* a font below ``READABLE_PT`` (:mod:`.techniques`; the box is checked first, the font size only for
  small boxes);
* a box outside the page's crop box;
* a box wholly inside an opaque shape drawn after it (page-level shapes only: figures' own paths
  are many, and a figure covering text is not how papers are made);
* marked as optional content (a layer) and drawing nothing: pdfium does not say which layers are
  off, but its renderer obeys them, so the object's region is rendered with and without it.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pypdfium2.raw as pdfium_c

from checklist_eval.reading.pdf.techniques import READABLE_PT

__all__ = ["hidden_objects"]

COLOUR_TOLERANCE = 24  # per RGB channel (0-255): text this close to what is under it is not seen
MIN_ALPHA = 26  # fill alpha (0-255) below this (10 %) is not seen

_TEXT = pdfium_c.FPDF_PAGEOBJ_TEXT
_PATH = pdfium_c.FPDF_PAGEOBJ_PATH
_IMAGE = pdfium_c.FPDF_PAGEOBJ_IMAGE
_SHADING = pdfium_c.FPDF_PAGEOBJ_SHADING
_FORM = pdfium_c.FPDF_PAGEOBJ_FORM
_WHITE = (255, 255, 255)

Box = tuple[float, float, float, float]  # left, bottom, right, top in page space
Matrix = tuple[float, float, float, float, float, float]


def _untyped(fn: Any, restype: Any = ctypes.c_int) -> Callable[..., Any]:
    """The same pdfium function without ctypes' per-argument conversion, which costs more than the
    call itself (a page walk measured 3-4x faster). Callers pass only pointer objects and ints."""
    fast = type(fn)(ctypes.cast(fn, ctypes.c_void_p).value)
    fast.restype = restype
    return fast


_get_type = _untyped(pdfium_c.FPDFPageObj_GetType)
_page_count = _untyped(pdfium_c.FPDFPage_CountObjects)
_page_object = _untyped(pdfium_c.FPDFPage_GetObject, pdfium_c.FPDF_PAGEOBJECT)
_form_count = _untyped(pdfium_c.FPDFFormObj_CountObjects)
_form_object = _untyped(pdfium_c.FPDFFormObj_GetObject, pdfium_c.FPDF_PAGEOBJECT)
_render_mode = _untyped(pdfium_c.FPDFTextObj_GetTextRenderMode)
_fill_colour = _untyped(pdfium_c.FPDFPageObj_GetFillColor)
_bounds = _untyped(pdfium_c.FPDFPageObj_GetBounds)
_count_marks = _untyped(pdfium_c.FPDFPageObj_CountMarks)
_get_mark = _untyped(pdfium_c.FPDFPageObj_GetMark, pdfium_c.FPDF_PAGEOBJECTMARK)
_mark_name = _untyped(pdfium_c.FPDFPageObjMark_GetName)
_OC_NAME = "OC\0".encode("utf-16-le")
_INVISIBLE = pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE
_CLIP = pdfium_c.FPDF_TEXTRENDERMODE_CLIP
_FILL = pdfium_c.FPDF_TEXTRENDERMODE_FILL


def _address(obj: Any) -> int:
    return ctypes.cast(obj, ctypes.c_void_p).value or 0


class _Calls:
    """Reusable out-parameters for the raw calls (building them per call costs more than the call)."""

    def __init__(self) -> None:
        self.rgba = [ctypes.c_uint() for _ in range(4)]
        self.rgba_refs = [ctypes.byref(v) for v in self.rgba]
        self.box = [ctypes.c_float() for _ in range(4)]
        self.box_refs = [ctypes.byref(v) for v in self.box]
        self.size = ctypes.c_float()
        self.fill_mode = ctypes.c_int()
        self.stroke = ctypes.c_int()
        self.matrix = pdfium_c.FS_MATRIX()

    def colour(self, obj: object) -> tuple[int, int, int, int] | None:
        if not _fill_colour(obj, *self.rgba_refs):
            return None
        r, g, b, a = (v.value for v in self.rgba)
        return r, g, b, a

    def bounds(self, obj: object, m: Matrix | None) -> Box | None:
        if not _bounds(obj, *self.box_refs):
            return None
        left, bottom, right, top = (v.value for v in self.box)
        return _transform_box((left, bottom, right, top), m) if m else (left, bottom, right, top)

    def obj_matrix(self, obj: object) -> Matrix | None:
        if not pdfium_c.FPDFPageObj_GetMatrix(obj, ctypes.byref(self.matrix)):
            return None
        mx = self.matrix
        return mx.a, mx.b, mx.c, mx.d, mx.e, mx.f

    def font_size(self, obj: object) -> float:
        if not pdfium_c.FPDFTextObj_GetFontSize(obj, ctypes.byref(self.size)):
            return 0.0
        return self.size.value

    def filled(self, obj: object) -> bool:
        ok = pdfium_c.FPDFPath_GetDrawMode(obj, ctypes.byref(self.fill_mode), ctypes.byref(self.stroke))
        return bool(ok) and self.fill_mode.value != pdfium_c.FPDF_FILLMODE_NONE


def _compose(inner: Matrix, outer: Matrix | None) -> Matrix:
    if outer is None:
        return inner
    a, b, c, d, e, f = inner
    A, B, C, D, E, F = outer
    return (a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D, e * A + f * C + E, e * B + f * D + F)


def _transform_box(box: Box, m: Matrix) -> Box:
    a, b, c, d, e, f = m
    if b == 0 and c == 0:  # scale and shift, the usual figure placement
        x0, x1, y0, y1 = a * box[0] + e, a * box[2] + e, d * box[1] + f, d * box[3] + f
        return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)
    xs, ys = [], []
    for x in (box[0], box[2]):
        for y in (box[1], box[3]):
            xs.append(a * x + c * y + e)
            ys.append(b * x + d * y + f)
    return min(xs), min(ys), max(xs), max(ys)


def _scale(m: Matrix | None) -> float:
    if m is None:
        return 1.0
    return abs(m[0] * m[3] - m[1] * m[2]) ** 0.5


_TextObj = tuple[object, int, Box, tuple[int, int, int], bool]  # object, painting order, box, colour, in a figure


@dataclass
class _Shape:
    seq: int  # painting order on the page
    box: Box
    rgb: tuple[int, int, int] | None  # None: an image or shading, colours unknown
    opaque: bool
    image: bool = False


@dataclass
class _Walk:
    texts: list[_TextObj] = field(default_factory=list)
    invisible: list[_TextObj] = field(default_factory=list)  # render mode 3: hidden unless over an image
    optional: list[_TextObj] = field(default_factory=list)  # inside optional content: drawn only if its layer is on
    optional_depth: int = 0  # > 0 while inside a form marked as optional content
    shapes: list[_Shape] = field(default_factory=list)
    hidden: dict[int, str] = field(default_factory=dict)  # object address -> technique
    in_figure: set[int] = field(default_factory=set)  # hidden objects drawn inside a form XObject
    seq: int = 0
    depth: int = 0


# A shape smaller than this (either side, pt) can neither hold nor cover a line of text: table rules,
# plot markers and glyph-like paths are skipped before any colour is read.
_MIN_SHAPE_SIDE = 3.0
# Bounds for hostile pages: text-by-shape comparisons per page (the largest shapes are kept; a real
# page has a few dozen boxes) and how deep forms inside forms are followed.
_MAX_COMPARISONS = 2_000_000
_MAX_FORM_DEPTH = 16


def _walk(calls: _Calls, holder: object, top: bool, m: Matrix | None, out: _Walk, deep: bool) -> None:
    """Every object in painting order: text classified by its own properties, shapes collected (the
    page's own always; those inside forms only on the ``deep`` walk, for white text inside figures)."""
    count, get = (_page_count, _page_object) if top else (_form_count, _form_object)
    get_type = _get_type
    classify = None if deep else _TextSorter(calls, out, m, in_figure=not top).sort
    for i in range(count(holder)):
        obj = get(holder, i)
        kind = get_type(obj)
        out.seq = seq = out.seq + 1
        if kind == _TEXT:
            if classify is not None:
                classify(obj, seq)
        elif kind == _FORM and out.depth < _MAX_FORM_DEPTH:
            _walk_form(calls, obj, m, out, deep)
        elif (top or deep) and kind in (_PATH, _IMAGE, _SHADING):
            shape = _shape(calls, obj, kind, m, seq)
            if shape is not None:
                out.shapes.append(shape)


def _walk_form(calls: _Calls, form: object, m: Matrix | None, out: _Walk, deep: bool) -> None:
    """A form XObject's objects, placed by its matrix; when the form is optional content, so is
    everything drawn in it."""
    inner = calls.obj_matrix(form)
    optional = bool(_count_marks(form) and _optional_content(form))
    out.depth += 1
    out.optional_depth += optional
    _walk(calls, form, False, _compose(inner, m) if inner else m, out, deep)
    out.depth -= 1
    out.optional_depth -= optional


_SMALL_BOX = READABLE_PT * 1.5  # a text box narrower or lower than this may be set in a tiny font


class _TextSorter:
    """Sorts the text objects of one page or form by their own properties: hidden by render mode,
    alpha or size; invisible and optional content, decided later; the rest kept for the colour and
    position checks. Written flat on bound out-parameters: it runs for every text object of every page."""

    def __init__(self, calls: _Calls, out: _Walk, m: Matrix | None, in_figure: bool) -> None:
        self.calls, self.out, self.m, self.in_figure = calls, out, m, in_figure
        self.rgba_refs, self.box_refs = calls.rgba_refs, calls.box_refs

    def sort(self, obj: object, seq: int) -> None:
        mode = _render_mode(obj)
        if mode == _INVISIBLE:
            box = self.calls.bounds(obj, self.m)
            if box is not None:
                self.out.invisible.append((obj, seq, box, _WHITE, self.in_figure))
            return
        if mode == _CLIP:
            _hide(self.out, obj, "clip", self.in_figure)
            return
        if not (_fill_colour(obj, *self.rgba_refs) and _bounds(obj, *self.box_refs)):
            return
        left, bottom, right, top = self.calls.box
        box = (left.value, bottom.value, right.value, top.value)
        if self.m is not None:
            box = _transform_box(box, self.m)
        self._sort_painted(obj, seq, mode, box)

    def _sort_painted(self, obj: object, seq: int, mode: int, box: Box) -> None:
        out, in_figure = self.out, self.in_figure
        if out.optional_depth or (_count_marks(obj) and _optional_content(obj)):
            out.optional.append((obj, seq, box, _WHITE, in_figure))
        red, green, blue, alpha = self.calls.rgba
        if alpha.value < MIN_ALPHA and mode == _FILL:
            _hide(out, obj, "transparent", in_figure)
        elif (box[2] - box[0] < _SMALL_BOX or box[3] - box[1] < _SMALL_BOX) and _tiny(self.calls, obj, self.m):
            _hide(out, obj, "tiny", in_figure)
        else:
            out.texts.append((obj, seq, box, (red.value, green.value, blue.value), in_figure))


def _optional_content(obj: object) -> bool:
    """The object sits in a marked-content sequence tagged OC (optional content: a layer that a
    viewer may switch off, and the document may have off by default)."""
    name = (ctypes.c_ushort * 8)()
    length = ctypes.c_ulong()
    # tagged PDFs mark every object (/P, /Span): this runs per object there, so it stays on raw calls
    for i in range(_count_marks(obj)):
        mark = _get_mark(obj, i)
        if mark and _mark_name(mark, name, ctypes.c_ulong(ctypes.sizeof(name)), ctypes.byref(length)):
            if bytes(name)[: length.value] == _OC_NAME:
                return True
    return False


def _hide(out: _Walk, obj: object, technique: str, in_figure: bool) -> None:
    addr = _address(obj)
    out.hidden[addr] = technique
    if in_figure:
        out.in_figure.add(addr)


def _tiny(calls: _Calls, obj: object, m: Matrix | None) -> bool:
    """The effective font size (font size times the text and form matrices) is below READABLE_PT.
    A small box alone is not enough: a lone "." or "|" has one."""
    size = calls.font_size(obj)
    return size > 0 and size * _scale(calls.obj_matrix(obj)) * _scale(m) < READABLE_PT


def _shape(calls: _Calls, obj: object, kind: int, m: Matrix | None, seq: int) -> _Shape | None:
    box = calls.bounds(obj, m)
    if box is None or box[2] - box[0] < _MIN_SHAPE_SIDE or box[3] - box[1] < _MIN_SHAPE_SIDE:
        return None
    if kind != _PATH:
        opaque = kind == _IMAGE and not pdfium_c.FPDFPageObj_HasTransparency(obj)
        return _Shape(seq, box, None, opaque, image=kind == _IMAGE)
    if not calls.filled(obj):
        return None
    colour = calls.colour(obj)
    if colour is None or colour[3] < MIN_ALPHA:
        return None
    return _Shape(seq, box, colour[:3], colour[3] == 255)


def _inside(inner: Box, outer: Box, slack: float = 0.5) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack
            and inner[2] <= outer[2] + slack and inner[3] <= outer[3] + slack)


def _holds_centre(outer: Box, inner: Box) -> bool:
    x, y = (inner[0] + inner[2]) / 2, (inner[1] + inner[3]) / 2
    return outer[0] <= x <= outer[2] and outer[1] <= y <= outer[3]


def _close(a: tuple[int, int, int], b: tuple[int, int, int] | None) -> bool:
    return b is not None and all(abs(x - y) <= COLOUR_TOLERANCE for x, y in zip(a, b, strict=True))


def _background(seq: int, box: Box, shapes: list[_Shape]) -> tuple[int, int, int] | None:
    """The colour under a text object: the topmost earlier shape under its centre, else the page.
    None when that is an image or a shading (colours unknown: the text counts as seen)."""
    under: tuple[int, int, int] | None = _WHITE
    for shape in shapes:
        if shape.seq < seq and _holds_centre(shape.box, box):
            under = shape.rgb
    return under


def _covered(seq: int, box: Box, shapes: list[_Shape]) -> bool:
    return any(s.opaque and s.seq > seq and _inside(box, s.box) for s in shapes)


_MAX_OPTIONAL_RENDERS = 32  # per page: each optional-content text object costs two small renders
_MAX_RENDER_PX = 1500


def _check_optional(page: object, walk: _Walk) -> None:
    """Text in optional content is hidden when its layer is off. pdfium's API does not say which
    layers are off, but its renderer obeys them: a text object whose region renders the same with and
    without it draws nothing."""
    set_active = getattr(pdfium_c, "FPDFPageObj_SetIsActive", None)  # pdfium builds from 2024 on
    if not walk.optional or set_active is None or pdfium_c.FPDFPage_GetRotation(page) != 0:
        return
    for obj, _seq, box, _rgb, in_figure in walk.optional[:_MAX_OPTIONAL_RENDERS]:
        if _address(obj) in walk.hidden:
            continue
        before = _render_region(page, box)
        set_active(obj, False)
        try:
            after = _render_region(page, box)
        finally:
            set_active(obj, True)
        if before is not None and before == after:
            _hide(walk, obj, "optional", in_figure)


def _render_region(page: object, box: Box) -> bytes | None:
    """The pixels of a page region (page space, at most _MAX_RENDER_PX a side) on a white ground."""
    height = pdfium_c.FPDF_GetPageHeightF(page)
    width = pdfium_c.FPDF_GetPageWidthF(page)
    span = max(box[2] - box[0], box[3] - box[1], 1.0)
    scale = min(2.0, _MAX_RENDER_PX / span)
    w, h = max(1, int((box[2] - box[0]) * scale) + 2), max(1, int((box[3] - box[1]) * scale) + 2)
    bitmap = pdfium_c.FPDFBitmap_Create(w, h, 0)
    if not bitmap:
        return None
    try:
        pdfium_c.FPDFBitmap_FillRect(bitmap, 0, 0, w, h, 0xFFFFFFFF)
        pdfium_c.FPDF_RenderPageBitmap(bitmap, page, int(-box[0] * scale) + 1, int(-(height - box[3]) * scale) + 1,
                                       int(width * scale), int(height * scale), 0, 0)
        stride = pdfium_c.FPDFBitmap_GetStride(bitmap)
        return ctypes.string_at(pdfium_c.FPDFBitmap_GetBuffer(bitmap), stride * h)
    finally:
        pdfium_c.FPDFBitmap_Destroy(bitmap)


def _limit(shapes: list[_Shape], n_texts: int) -> list[_Shape]:
    """At most _MAX_COMPARISONS text-by-shape checks: the largest shapes, in painting order."""
    keep = _MAX_COMPARISONS // max(1, n_texts)
    if len(shapes) <= keep:
        return shapes
    largest = sorted(shapes, key=lambda s: (s.box[2] - s.box[0]) * (s.box[3] - s.box[1]), reverse=True)
    return sorted(largest[:keep], key=lambda s: s.seq)


def hidden_objects(page: object, crop: Box) -> tuple[dict[int, str], set[int]]:
    """Address of each hidden text object of a page -> how it is hidden (a key of ``TECHNIQUES`` in
    :mod:`.techniques`), and the addresses of those drawn inside a figure (a form XObject)."""
    calls = _Calls()
    walk = _Walk()
    _walk(calls, page, True, None, walk, deep=False)
    shapes = _limit(walk.shapes, len(walk.texts) + len(walk.invisible))
    _hide_invisible(walk, shapes)
    _check_optional(page, walk)
    candidates = _hide_by_place(walk, shapes, crop)
    if candidates:
        _hide_on_background(calls, page, walk, candidates)
    return walk.hidden, walk.in_figure


def _hide_invisible(walk: _Walk, shapes: list[_Shape]) -> None:
    for obj, seq, box, _rgb, in_figure in walk.invisible:
        # Invisible text over a picture of itself is a scan's OCR layer: the reader sees the picture.
        if not any(s.image and s.seq < seq and _holds_centre(s.box, box) for s in shapes):
            _hide(walk, obj, "invisible", in_figure)


def _hide_by_place(walk: _Walk, shapes: list[_Shape], crop: Box) -> list[_TextObj]:
    """Hides text outside the crop box or under an opaque shape; returns the text the colour of what
    is under it (or near-white, on a page without coloured shapes) for :func:`_hide_on_background`."""
    coloured = any(s.rgb != _WHITE for s in shapes)
    pale = 255 - COLOUR_TOLERANCE
    x0, y0, x1, y1 = crop
    candidates = []
    for text in walk.texts:
        obj, seq, box, rgb, in_figure = text
        if box[2] <= x0 or box[0] >= x1 or box[3] <= y0 or box[1] >= y1:
            _hide(walk, obj, "off_page", in_figure)
        elif shapes and _covered(seq, box, shapes):
            _hide(walk, obj, "covered", in_figure)
        elif coloured:
            if _close(rgb, _background(seq, box, shapes)):
                candidates.append(text)
        elif rgb[0] >= pale and rgb[1] >= pale and rgb[2] >= pale:
            candidates.append(text)
    return candidates


def _hide_on_background(calls: _Calls, page: object, walk: _Walk, candidates: list[_TextObj]) -> None:
    # Text the colour of the page may sit on a shape inside a figure: look there before calling it hidden.
    deep = _Walk()
    _walk(calls, page, True, None, deep, deep=True)
    deep_shapes = _limit(deep.shapes, len(candidates))
    for obj, seq, box, rgb, in_figure in candidates:
        if _close(rgb, _background(seq, box, deep_shapes)):
            _hide(walk, obj, "background", in_figure)
