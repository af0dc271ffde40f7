import PhotoWallServices
import Testing

/// `FileService.safeForm`, the stored form of a client's file name, at its edges (the API's
/// `FileNameTests` post real phone and desktop names through it).
@Suite struct SafeFileNameTests {
    @Test(arguments: [
        ("small.jpg", "small.jpg"),
        ("a  b((c)).png", "a_b_c.png"),                  // a run of others is one `_`; one before the extension goes
        ("__--..x..__.jpg", "x.jpg"),                    // leading `_`, `-`, `.` and trailing `_`, `.` go
        ("x-.jpg", "x-.jpg"),                            // a trailing `-` stays
        ("...", "file"), ("", "file"), ("(🎉).gif", "file.gif"),
        ("a.b.c", "a.b.c"),                              // the last `.` starts the extension
        ("name.jpg;", "name.jpg"),                       // `;` is a `_` at the end, trimmed
        ("v1.0-final", "v1.0-final"),                    // `0-final` is no extension: the whole is the stem
        ("a." + String(repeating: "x", count: 16), "a." + String(repeating: "x", count: 16)),
        ("a." + String(repeating: "x", count: 17), "a." + String(repeating: "x", count: 17)),  // no extension: one stem
        (String(repeating: "ab", count: 60) + ".jpeg", String(repeating: "ab", count: 50) + ".jpeg"),  // stem cut to 100
        ("e\u{301}te\u{301}.jpg", "ete.jpg"),            // combining accents transliterate away
        ("Ωmega.png", "Omega.png"),
    ])
    func storedForm(name: String, safe: String) {
        #expect(FileService.safeForm(of: name) == safe, "\(name.debugDescription)")
    }
}
