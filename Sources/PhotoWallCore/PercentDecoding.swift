/// Decodes `%XX` escapes (and `+` as space when `plusAsSpace`); invalid escapes are kept as written.
public func percentDecode(_ s: some StringProtocol, plusAsSpace: Bool = false) -> String {
    if !s.utf8.contains(where: { $0 == 37 || (plusAsSpace && $0 == 43) }) { return String(s) }
    var out: [UInt8] = []
    let b = Array(s.utf8)
    out.reserveCapacity(b.count)
    var i = 0
    func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 65...70: return c - 55
        case 97...102: return c - 87
        default: return nil
        }
    }
    while i < b.count {
        if b[i] == 37, i + 2 < b.count, let h = hex(b[i + 1]), let l = hex(b[i + 2]) {
            out.append(h << 4 | l); i += 3
        } else if plusAsSpace && b[i] == 43 {
            out.append(32); i += 1
        } else {
            out.append(b[i]); i += 1
        }
    }
    return String(decoding: out, as: UTF8.self)
}
