import Testing
import PhotoWallCore

@Suite struct CommandLineOptionsTests {
    @Test func readsBothSpellingsFlagsAndPositionals() throws {
        let o = try CommandLineOptions(["a", "--port", "80", "--host=::1", "--json", "b", "--uri", "x", "--uri=y"],
                                       known: ["port", "host", "uri"], flags: ["json", "help"])
        #expect(o.value("port") == "80")
        #expect(o.value("host") == "::1")
        #expect(o.flag("json") && !o.flag("help"))
        #expect(o.flags == ["json"])
        #expect(o.value("uri") == "y")
        #expect(o.repeated["uri"] == ["x", "y"])
        #expect(o.positional == ["a", "b"])
        #expect(try o.int("port") == 80)
        #expect(try o.int("missing") == nil)
        #expect(throws: UsageError("bad --host '::1'")) { try o.int("host") }
    }

    @Test func valueFallsBackToTheFirstSetEnvironmentVariable() throws {
        let o = try CommandLineOptions([], known: ["x"])
        #expect(o.value("x", env: ["PHOTOWALL_TEST_UNSET_VARIABLE", "PATH"]) != nil)
        #expect(o.value("x", env: ["PHOTOWALL_TEST_UNSET_VARIABLE"]) == nil)
        let given = try CommandLineOptions(["--x", "1"], known: ["x"])
        #expect(given.value("x", env: ["PATH"]) == "1")
    }

    @Test func usageErrorsNameTheProblem() {
        #expect(throws: UsageError("unknown option --nope")) { try CommandLineOptions(["--nope"], known: ["x"]) }
        #expect(throws: UsageError("--x needs a value")) { try CommandLineOptions(["--x"], known: ["x"]) }
        #expect(throws: UsageError("unexpected argument 'serve'")) {
            try CommandLineOptions(["serve"], known: [], allowsPositional: false)
        }
    }

    @Test func shortFlagsAreSpellingsOfLongOnes() throws {
        let o = try CommandLineOptions(["-h"], known: [], flags: ["help"], shortFlags: ["-h": "help"], allowsPositional: false)
        #expect(o.flag("help") && o.flags == ["help"])
        #expect(try CommandLineOptions(["--help=yes"], known: [], flags: ["help"]).value("help") == "yes")
    }
}
