import PhotoWallCore
import PhotoWallStorage
import Testing

/// `StoredRowView.storedPointerId`: the id of a Pointer as it is stored, read in place, and nil for
/// anything the caller must decode instead; where it answers, the decoded pointer agrees.
@Suite struct StoredRowViewTests {
    func id(_ text: String) -> String? {
        Array(text.utf8).withUnsafeBufferPointer { StoredRowView.storedPointerId($0).map { String(decoding: $0, as: UTF8.self) } }
    }

    @Test func readsTheIdOfAStoredPointer() throws {
        let stored = [#"{"__type":"Pointer","className":"_User","objectId":"YzXicWL5b6"}"#,
                      #"{"__type":"Pointer","className":"WallImage","objectId":"a"}"#,
                      #"{"__type":"Pointer","className":"","objectId":""}"#,
                      #"{"__type":"Pointer","className":"é","objectId":"ü"}"#]
        for text in stored {
            let decoded = try JSON.parse(Array(text.utf8))["objectId"]?.stringValue
            #expect(id(text) == decoded, "\(text)")
            #expect(id(text) != nil, "\(text)")
        }
    }

    @Test func leavesEverythingElseToTheDecoder() {
        for text in [
            #"{"__type":"Pointer","className":"_User","objectId":"a\"b"}"#,        // escape in the id
            #"{"__type":"Pointer","className":"x\",\"objectId\":\"evil","objectId":"real"}"#,  // escape in the class
            #"{"__type":"Pointer","className":"_User","objectId":"abc","x":1}"#,    // a member after the id
            #"{"__type":"Pointer","objectId":"abc"}"#,                              // no class
            #"{"__type":"File","name":"abc"}"#,
            #"{"__type":"Pointer","className":"_User","objectId":"abc"#,            // cut short
            #"{"__type":"Pointer","className":"_User"}"#,
            #"{"__type":"Pointer","className":"_User","objectI":"abc"}"#,
            #""abc""#, "", "{}",
        ] {
            #expect(id(text) == nil, "\(text)")
        }
    }
}
