"""Tables for the pages: a pandas table as Markdown, and the cell texts and seed statistics the
stages' tables share."""

from __future__ import annotations


def markdown_table(df, index: bool = False, text: bool = False) -> str:
    """A pandas table as GitHub Markdown. A ``|`` inside a cell or a header (``|S|``, ``|x − y|``)
    is escaped, so it cannot split the row. Object dtype keeps integer columns integers (a numeric
    frame would be upcast to float). ``text`` prints every cell as given (``"82.0"`` stays ``82.0``)."""

    def esc(v):
        return v.replace("|", "\\|") if isinstance(v, str) else v

    out = df.astype(object).map(esc)
    out.columns = [esc(str(c)) for c in out.columns]
    if index:
        out.index = [esc(str(i)) for i in out.index]
    return out.to_markdown(index=index, floatfmt=".4g", disable_numparse=text)
