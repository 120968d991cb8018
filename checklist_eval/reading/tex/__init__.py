"""Reading a LaTeX paper with the TeX on the machine: what the PDF prints, not what a model of TeX guesses.

``project`` (the project's files copied for TeX, and their digest), ``engine`` (which engine, its
version, what its log says, the Debian package of a missing file), ``compile`` (a bounded compile in the
worker's temporary folder and the compile cache), ``synctex`` (each printed answer's file and line),
``read`` (TeX's reading: compile, read the PDF, place the answers) and ``compare`` (TeX's reading and the
source evaluator's, side by side: TeX's stands, and every difference is a finding).
"""

# ``--tex``: auto (TeX's reading when the machine's TeX gives one, else the source's), always (TeX's or
# the paper fails with the reason), never (the source evaluator alone). Here, not in ``latex_paper``:
# every command's flags read it, and this module imports nothing.
TEX_MODES = ("auto", "always", "never")
DEFAULT_TEX = "auto"
