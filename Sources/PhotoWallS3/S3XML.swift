/// A parsed XML element: name (namespace prefix dropped), text content and child elements.
/// Attributes are skipped: S3 responses carry data only in elements.
struct XMLNode {
    var name: String
    var text = ""
    var children: [XMLNode] = []

    /// The first child named `name`.
    func child(_ name: String) -> XMLNode? { children.first { $0.name == name } }
    /// All children named `name`.
    func all(_ name: String) -> [XMLNode] { children.filter { $0.name == name } }
    /// The text of the first child named `name`.
    func text(_ name: String) -> String? { child(name)?.text }
}

/// A small, strict XML parser for S3 response bodies: elements, text, the five predefined
/// entities and numeric character references, CDATA, comments, and the `<?xml …?>` declaration.
/// No DTDs (a `<!DOCTYPE` is refused, so no entity expansion attacks).
/// - Source: XML 1.0 (Fifth Edition) §2.4 (character data), §4.1 (references); the S3 API
///   reference response shapes (ListBucketResult, InitiateMultipartUploadResult, Error, …).
enum S3XML {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses `bytes` and returns the root element.
    /// - Throws: `Failure` for malformed or truncated XML.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> XMLNode {
        var i = 0
        let n = bytes.count
        var stack: [XMLNode] = []
        var root: XMLNode?

        func starts(_ s: String, at p: Int) -> Bool {
            let u = Array(s.utf8)
            return p + u.count <= n && Array(bytes[p..<(p + u.count)]) == u
        }
        func find(_ s: String, from p: Int) -> Int? {
            let u = Array(s.utf8)
            var q = p
            while q + u.count <= n {
                if bytes[q] == u[0] && Array(bytes[q..<(q + u.count)]) == u { return q }
                q += 1
            }
            return nil
        }

        while i < n {
            if bytes[i] == UInt8(ascii: "<") {
                if starts("<?", at: i) {
                    guard let e = find("?>", from: i) else { throw Failure(description: "unterminated declaration") }
                    i = e + 2
                } else if starts("<!--", at: i) {
                    guard let e = find("-->", from: i) else { throw Failure(description: "unterminated comment") }
                    i = e + 3
                } else if starts("<![CDATA[", at: i) {
                    guard let e = find("]]>", from: i + 9) else { throw Failure(description: "unterminated CDATA") }
                    guard !stack.isEmpty else { throw Failure(description: "text outside the root") }
                    stack[stack.count - 1].text += String(decoding: bytes[(i + 9)..<e], as: UTF8.self)
                    i = e + 3
                } else if starts("<!", at: i) {
                    throw Failure(description: "DTDs are not accepted")
                } else if starts("</", at: i) {
                    guard let e = find(">", from: i) else { throw Failure(description: "unterminated end tag") }
                    let name = localName(String(decoding: bytes[(i + 2)..<e], as: UTF8.self).trimmingSpaces())
                    guard let node = stack.popLast(), node.name == name else { throw Failure(description: "mismatched </\(name)>") }
                    if stack.isEmpty { root = node } else { stack[stack.count - 1].children.append(node) }
                    i = e + 1
                } else {
                    guard let e = find(">", from: i) else { throw Failure(description: "unterminated tag") }
                    var inner = String(decoding: bytes[(i + 1)..<e], as: UTF8.self)
                    let selfClosing = inner.hasSuffix("/")
                    if selfClosing { inner.removeLast() }
                    let name = localName(String(inner.prefix { $0 != " " && $0 != "\t" && $0 != "\n" && $0 != "\r" }))
                    guard !name.isEmpty else { throw Failure(description: "empty tag name") }
                    guard root == nil else { throw Failure(description: "content after the root element") }
                    if selfClosing {
                        let node = XMLNode(name: name)
                        if stack.isEmpty { root = node } else { stack[stack.count - 1].children.append(node) }
                    } else {
                        stack.append(XMLNode(name: name))
                    }
                    i = e + 1
                }
            } else {
                var e = i
                while e < n && bytes[e] != UInt8(ascii: "<") { e += 1 }
                if !stack.isEmpty {
                    stack[stack.count - 1].text += try decodeEntities(String(decoding: bytes[i..<e], as: UTF8.self))
                }
                i = e
            }
        }
        guard stack.isEmpty, let root else { throw Failure(description: "truncated document") }
        return root
    }

    /// `s3:Key` → `Key`.
    static func localName(_ s: String) -> String {
        guard let c = s.lastIndex(of: ":") else { return s }
        return String(s[s.index(after: c)...])
    }

    /// Replaces `&amp; &lt; &gt; &quot; &apos; &#N; &#xH;`. - Throws: for any other reference.
    static func decodeEntities(_ s: String) throws(Failure) -> String {
        guard s.contains("&") else { return s }
        var out = ""
        var rest = Substring(s)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";") else { throw Failure(description: "bad entity") }
            let entity = rest[rest.index(after: amp)..<semi]
            switch entity {
            case "amp": out += "&"
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                let scalar: UInt32?
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") { scalar = UInt32(entity.dropFirst(2), radix: 16) }
                else if entity.hasPrefix("#") { scalar = UInt32(entity.dropFirst()) }
                else { scalar = nil }
                guard let scalar, let u = Unicode.Scalar(scalar) else { throw Failure(description: "unknown entity &\(entity);") }
                out.unicodeScalars.append(u)
            }
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }

    /// Escapes text for an element body (`& < >`).
    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\n" || f == "\r" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" || l == "\r" { s.removeLast() }
        return String(s)
    }
}
