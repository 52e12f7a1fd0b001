# identifiers and strings with multi-byte UTF-8 characters: columns are byte offsets.
café = "naïve"
名前 = "値"; 变量 = 名前 + "文字"
emoji = "🐍" + f"{café}🐍{名前!r:>10}" + "∑"
ﬁle = 1  # NFKC-normalised to "file"
Ω = {"ключ": "значение", "κλειδί": ["τιμή", b"bytes"]}
def función(parámetro: str = "défaut") -> str:
    return parámetro + "✓"
class Ünïcödé:
    ñ = "ñ"
x = Ω["ключ"] if café else 名前
