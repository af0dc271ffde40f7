/// Name parts for generated fixture users: varied origins, a few non-ASCII spellings so that
/// clients and servers see real UTF-8. `ascii` folds them for e-mail addresses.
enum FixtureNames {
    static let first = [
        "Ava", "Liam", "Noor", "Mateo", "Zoë", "Kenji", "Amara", "Lukas", "Priya", "Oscar",
        "Leila", "Tomás", "Ingrid", "Kwame", "Mei", "Rafael", "Saoirse", "Dmitri", "Aiko", "Jonah",
        "Fatima", "Henrik", "Camila", "Arjun", "Elif", "Mason", "Chiara", "Olu", "Hana", "Felix",
        "Yara", "Diego", "Astrid", "Samir", "Nadia", "Ethan", "Lucía", "Bjørn", "Imani", "Kai",
        "Sofia", "Ravi", "Maeve", "Tariq", "Isla", "Jun", "Zara", "Emeka", "Clara", "Idris",
        "Ananya", "Hugo", "Thandiwe", "Mila", "Andrés", "Freya", "Kofi", "Lina", "Otto", "Sun",
    ]
    static let last = [
        "Lindqvist", "Okafor", "Tanaka", "García", "Novak", "Haddad", "Kowalski", "Mensah", "Rossi", "Chen",
        "Müller", "Patel", "O'Brien", "Nakamura", "Silva", "Andersen", "Nguyen", "Dubois", "Kim", "Ivanova",
        "Hernández", "Abebe", "Larsen", "Yilmaz", "Costa", "Murphy", "Sato", "Jansen", "Ali", "Moreau",
        "Fischer", "Osei", "Romano", "Park", "Eriksen", "Kaur", "Walsh", "Petrov", "Mbeki", "Laurent",
        "Schmidt", "Adeyemi", "Ferreira", "Lee", "Svensson", "Reyes", "Bianchi", "Cohen", "Wójcik", "Singh",
    ]

    /// Lower-case ASCII for an e-mail local part: folds the accents used above, drops other marks.
    static func ascii(_ text: String) -> String {
        let folds: [Character: String] = ["ë": "e", "á": "a", "í": "i", "ø": "o", "é": "e", "ü": "u", "ó": "o", "ñ": "n"]
        var out = ""
        for ch in text.lowercased() {
            if let f = folds[ch] { out += f } else if ch.isASCII, ch.isLetter || ch.isNumber { out.append(ch) }
        }
        return out
    }
}
