/// Translates a Parse `$regex` (PCRE / Swift `Regex` flavour) and its `$options` into a
/// PostgreSQL ARE for the `~` operator.
///
/// Options become an embedded-options prefix `(?…)` (PostgreSQL 15 manual §9.7.3.4, Table 9.24):
/// `i` → `i`; `x` → `x`; the newline options map as
/// none → `p` (`.` stops at newlines, `^`/`$` only at the ends: PCRE's default),
/// `m` → `n` (`^`/`$` also at line breaks), `s` → `s` (`.` matches newlines), `m`+`s` → `w`.
///
/// Escapes rewritten outside brackets: `\b` → `\y`, `\B` → `\Y` (ARE word boundaries; in an ARE
/// `\b` is a backspace), `\z` → `\Z`. Named groups `(?<name>…)` / `(?P<name>…)` become plain
/// groups. Supported as in PCRE: classes `\d \w \s`, bracket expressions, `*? +? ??` lazy
/// quantifiers, `{m,n}`, lookahead `(?=…)`/`(?!…)`, lookbehind `(?<=…)`/`(?<!…)`, back-references.
/// Not supported (PostgreSQL rejects the pattern, reported as 102 "Invalid regular expression."):
/// possessive quantifiers, atomic groups, `\p{…}` properties, inline flag groups in the middle of
/// a pattern. One difference stays: in `p`/`n` modes a negated bracket `[^a]` does not match a newline.
enum PostgresRegex {
    static func translate(_ pattern: String, options: String) -> String {
        let m = options.contains("m"), s = options.contains("s")
        var flags = m ? (s ? "w" : "n") : (s ? "s" : "p")
        if options.contains("i") { flags += "i" }
        if options.contains("x") { flags += "x" }
        return "(?\(flags))" + rewrite(pattern)
    }

    static func rewrite(_ pattern: String) -> String {
        let chars = Array(pattern)
        var out = ""
        var i = 0
        var inBracket = false
        while i < chars.count {
            let c = chars[i]
            if c == "\\", i + 1 < chars.count {
                let n = chars[i + 1]
                if !inBracket {
                    switch n {
                    case "b": out += "\\y"
                    case "B": out += "\\Y"
                    case "z": out += "\\Z"
                    default: out.append(c); out.append(n)
                    }
                } else {
                    out.append(c); out.append(n)
                }
                i += 2
                continue
            }
            if inBracket {
                if c == "]" { inBracket = false }
                out.append(c)
                i += 1
                continue
            }
            if c == "[" {
                inBracket = true
                out.append(c)
                i += 1
                // A leading `]` (or `^]`) is literal inside brackets.
                if i < chars.count, chars[i] == "^" { out.append("^"); i += 1 }
                if i < chars.count, chars[i] == "]" { out.append("]"); i += 1 }
                continue
            }
            if c == "(", i + 2 < chars.count, chars[i + 1] == "?" {
                // (?<name>  or  (?P<name>  but not (?<= / (?<!
                var j = i + 2
                if chars[j] == "P" { j += 1 }
                if j < chars.count, chars[j] == "<", j + 1 < chars.count, chars[j + 1] != "=", chars[j + 1] != "!",
                   let close = chars[(j + 1)...].firstIndex(of: ">") {
                    out.append("(")
                    i = close + 1
                    continue
                }
            }
            out.append(c)
            i += 1
        }
        return out
    }
}
