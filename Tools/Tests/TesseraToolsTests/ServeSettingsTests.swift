import Foundation
import Testing
@testable import TesseraCLI
@testable import TesseraServer
import TesseraTestSupport

/// `tessera serve`'s one configuration reader: every setting declared once (`ServeSettings.declarations`),
/// read from flags, `TESSERA_…` variables and the config file with flags over variables over the file, and
/// no malformed value ignored, wherever it is given.
@Suite("tessera serve: one declaration of every setting, read from flags, the environment and the config file")
struct ServeSettingsTests {
    /// The settings `tessera serve --root /srv/images ARGUMENTS` reads with `environment`.
    static func settings(_ arguments: [String], environment: [String: String] = [:]) throws -> ServeSettings {
        try ServeCommand.parse(["--root", "/srv/images"] + arguments).readSettings(environment: environment)
    }

    /// The message of the error reading the settings throws, or `nil` (recorded) when they are read.
    static func refusal(_ arguments: [String], environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) -> String {
        do {
            _ = try settings(arguments, environment: environment)
            Issue.record("\(arguments) \(environment) was accepted", sourceLocation: sourceLocation)
            return ""
        } catch {
            return "\(error)"
        }
    }

    /// A config file holding `json`, for `--config`.
    static func configFile(_ json: String) throws -> String {
        let file = try temporaryDirectory().appendingPathComponent("serve.json")
        try Data(json.utf8).write(to: file)
        return file.path
    }

    @Test("a malformed variable stops the start with a message naming it and its value: TESSERA_GALLERY_THUMBHASH_SECONDS=abc")
    func malformedVariable() {
        let message = Self.refusal([], environment: ["TESSERA_GALLERY_THUMBHASH_SECONDS": "abc"])
        #expect(message.contains("TESSERA_GALLERY_THUMBHASH_SECONDS 'abc' is not a duration"), "\(message)")
        let number = Self.refusal([], environment: ["TESSERA_MAX_DECODES": "4.5"])
        #expect(number.contains("TESSERA_MAX_DECODES '4.5' is not a whole number"), "\(number)")
        let toggle = Self.refusal([], environment: ["TESSERA_ONLY_PRESETS": "maybe"])
        #expect(toggle.contains("TESSERA_ONLY_PRESETS 'maybe' is not one of 1, 0, true, false"), "\(toggle)")
        let range = Self.refusal([], environment: ["TESSERA_ALLOW_RANGES": "10.0.0.0/8, 10.0.0.0/99"])
        #expect(range.contains("TESSERA_ALLOW_RANGES '10.0.0.0/99' is not an address range"), "\(range)")
    }

    @Test("a malformed flag stops the start with a message naming it and its value")
    func malformedFlag() {
        let cases: [([String], String)] = [
            (["--max-decodes", "four"], "--max-decodes 'four' is not a whole number"),
            (["--request-timeout=soon"], "--request-timeout 'soon' is not a duration"),
            (["--listen", "localhost"], "--listen 'localhost' is not HOST:PORT"),
            (["--preset", "card:320x200:stretch"], "--preset 'card:320x200:stretch' is not NAME:WxH:MODE"),
            (["--gallery-thumbhash-seconds", "-1"], "--gallery-thumbhash-seconds '-1' is not a duration of 0 or more seconds"),
            (["--decoding", "sloppy"], "--decoding 'sloppy' is not one of lenient, strict"),
            (["--allowed-widths", "160,wide"], "--allowed-widths '160,wide' is not a comma-separated list of positive sizes"),
            (["--log-level", "loud"], "--log-level 'loud' is not one of trace"),
            (["--fallback-status", "410"], "--fallback-status '410' needs a fallback image"),
            (["--no-such-option", "1"], "--no-such-option is not an option of tessera serve"),
            (["--only-presets=yes"], "--only-presets 'yes' takes no value"),
            (["--listen"], "--listen needs a value"),
        ]
        for (arguments, expected) in cases {
            let message = Self.refusal(arguments)
            #expect(message.contains(expected), "\(arguments): \(message)")
        }
    }

    @Test("a malformed config file value stops the start with a message naming the key, the file and the value")
    func malformedFileValue() throws {
        let cases: [(String, String)] = [
            (#"{"gallery": {"thumbHashSeconds": "abc"}}"#, #"gallery.thumbHashSeconds in "#),
            (#"{"limits": {"maximumSourceBytes": "lots"}}"#, #"'"lots"' is not a whole number"#),
            (#"{"connections": {"idleTimeoutSeconds": true}}"#, "'true' is not a duration"),
            (#"{"onlyPresets": "sometimes"}"#, "onlyPresets in "),
            (#"{"listen": 8080}"#, "'8080' is not HOST:PORT"),
            (#"{"presets": [{"name": "card", "width": "wide"}]}"#, "is not a preset"),
            (#"{"maxAgeSeconds": 1.5}"#, "'1.5' is not a whole number of seconds"),
            (#"{"limits": {"maximumSourceByte": 10}}"#, "limits.maximumSourceByte in "),
            (#"{"limits": 5}"#, "'5' is not an object"),
            (#"{"logLevel": "debug"}"#, "logLevel in "),
            ("{not json", "is not JSON"),
        ]
        for (json, expected) in cases {
            let file = try Self.configFile(json)
            let message = Self.refusal(["--config", file])
            #expect(message.contains(expected), "\(json): \(message)")
            #expect(!json.hasPrefix("{\"") || message.contains(file), "the message names the file: \(message)")
        }
        // The same for a config decoded in a program of its own.
        #expect(throws: ServeSettingError.self) {
            try JSONDecoder().decode(ServerConfiguration.self, from: Data(#"{"root": "/r", "gallery": {"thumbHashSeconds": "abc"}}"#.utf8))
        }
    }

    @Test("flags over variables over the config file, for every kind of setting; an overridden malformed value still stops the start")
    func precedence() throws {
        let file = try Self.configFile(#"""
            {"listen": "127.0.0.1:1001", "limits": {"maximumConcurrentDecodes": 1, "requestTimeoutSeconds": 5},
             "gallery": {"thumbHashSeconds": "250ms"}, "remote": {"allowedHosts": ["file.example"]}}
            """#)
        let fileOnly = try Self.settings(["--config", file])
        #expect(fileOnly.configFile == file)
        #expect(fileOnly.server.listen == "127.0.0.1:1001" && fileOnly.server.limits.maximumConcurrentDecodes == 1)
        #expect(fileOnly.server.gallery.thumbHashSeconds == 0.25 && fileOnly.server.limits.requestTimeoutSeconds == 5)
        #expect(fileOnly.server.remote.allowedHosts == ["file.example"])
        let environment = ["TESSERA_CONFIG": file, "TESSERA_LISTEN": "127.0.0.1:1002", "TESSERA_MAX_DECODES": "2",
                           "TESSERA_ALLOW_HOSTS": "env.example, other.example", "TESSERA_REQUEST_TIMEOUT": "2m"]
        let fromVariables = try Self.settings([], environment: environment)
        #expect(fromVariables.server.listen == "127.0.0.1:1002" && fromVariables.server.limits.maximumConcurrentDecodes == 2)
        #expect(fromVariables.server.remote.allowedHosts == ["env.example", "other.example"])
        #expect(fromVariables.server.limits.requestTimeoutSeconds == 120)
        #expect(fromVariables.server.gallery.thumbHashSeconds == 0.25, "not given by a variable: the file's")
        let fromFlags = try Self.settings(["--listen", "127.0.0.1:1003", "--max-decodes=3", "--allow-host", "flag.example"],
                                          environment: environment)
        #expect(fromFlags.server.listen == "127.0.0.1:1003" && fromFlags.server.limits.maximumConcurrentDecodes == 3)
        #expect(fromFlags.server.remote.allowedHosts == ["flag.example"])
        #expect(fromFlags.server.limits.requestTimeoutSeconds == 120, "not given by a flag: the variable's")
        // The flag would win, but the variable under it is malformed: nothing is ignored.
        let message = Self.refusal(["--max-decodes", "3"], environment: ["TESSERA_MAX_DECODES": "three"])
        #expect(message.contains("TESSERA_MAX_DECODES 'three'"), "\(message)")
    }

    @Test("durations take seconds or a unit; toggles take any boolean spelling")
    func typedValues() throws {
        let settings = try Self.settings(["--request-timeout", "1500ms", "--idle-timeout", "2m", "--header-timeout", "0.5",
                                          "--partial-max-age", "1h", "--no-gallery"],
                                         environment: ["TESSERA_ONLY_PRESETS": "on", "TESSERA_S3_PATH_STYLE": "false"])
        #expect(settings.server.limits.requestTimeoutSeconds == 1.5)
        #expect(settings.server.connections.idleTimeoutSeconds == 120 && settings.server.connections.headerTimeoutSeconds == 0.5)
        #expect(settings.server.partialMaxAgeSeconds == 3600)
        #expect(settings.server.onlyPresets && settings.server.s3.pathStyle == false && !settings.server.gallery.enabled)
        #expect(try Self.settings([], environment: ["TESSERA_GALLERY": "off"]).server.gallery.enabled == false)
        #expect(try Self.settings([], environment: ["TESSERA_GALLERY": "on"]).server.gallery.enabled == true)
        #expect(try Self.settings([]).logLevel == nil)
        #expect(try Self.settings(["--log-level", "WARNING", "--log-format", "json"]).logLevel == .warning)
        #expect(try Self.settings([], environment: ["TESSERA_LOG_FORMAT": "json"]).logFormat == .json)
    }

    @Test("a secret comes from the file its …_FILE variable names (as systemd and Kubernetes mount them), never from both, and is never printed")
    func secretFiles() throws {
        let directory = try temporaryDirectory()
        let keys = directory.appendingPathComponent("signing-keys")
        try Data("2026-11:first-secret\n2026-10:older-secret\n".utf8).write(to: keys)
        let secret = directory.appendingPathComponent("s3-secret")
        try Data("wJalrXUtnFEMI/K7MDENG\n".utf8).write(to: secret)
        let settings = try Self.settings([], environment: [
            "TESSERA_SIGNING_KEYS_FILE": keys.path, "TESSERA_S3_SECRET_ACCESS_KEY_FILE": secret.path, "TESSERA_S3_ACCESS_KEY_ID": "AKIDEXAMPLE",
        ])
        #expect(settings.server.signingKeys == [.init(id: "2026-11", secret: "first-secret"), .init(id: "2026-10", secret: "older-secret")],
                "one key a line, as TESSERA_SIGNING_KEYS takes them comma-separated")
        #expect(settings.server.s3.secretAccessKey == "wJalrXUtnFEMI/K7MDENG", "the trailing line break is not part of the secret")
        #expect(settings.server.s3.accessKeyID == "AKIDEXAMPLE")
        let both = Self.refusal([], environment: ["TESSERA_SIGNING_KEYS": "a:b", "TESSERA_SIGNING_KEYS_FILE": keys.path])
        #expect(both.contains("TESSERA_SIGNING_KEYS_FILE") && both.contains("are both set"), "\(both)")
        let missing = Self.refusal([], environment: ["TESSERA_S3_SESSION_TOKEN_FILE": directory.appendingPathComponent("none").path])
        #expect(missing.contains("TESSERA_S3_SESSION_TOKEN_FILE") && missing.contains("names no readable file"), "\(missing)")
        let malformed = Self.refusal(["--signing-key", "no-colon-top-secret"])
        #expect(malformed.contains("--signing-key '(secret)' is not ID:SECRET"), "\(malformed)")
        #expect(!malformed.contains("top-secret"), "a secret is never printed: \(malformed)")
        // Only secrets have …_FILE variables.
        #expect(ServeSettings.declarations.filter { $0.environmentFile != nil }.map(\.key).sorted()
            == ["adminKey", "imgproxy.keys", "imgproxy.salts", "s3.accessKeyID", "s3.secretAccessKey", "s3.sessionToken", "signingKeys", "thumbor.key"])
    }

    @Test("check reads past every problem: each source's, each value's and the configuration's own are all named, and each value says where it came from")
    func checkNamesEveryProblem() throws {
        let config = try Self.configFile(#"{"maxAgeSeconds": "a day", "nonsense": 1, "tableCapacity": 77}"#)
        let (settings, problems) = ServeSettingsReader().check(
            arguments: ["--root", "/srv/images", "--config", config, "--max-decodes", "0", "--avif-speed", "fast", "--what"],
            environment: ["TESSERA_IDLE_TIMEOUT": "forever", "TESSERA_LISTEN": "127.0.0.1:9"])
        let named = problems.map(\.setting)
        // In the order they are read: the flags, the config file's keys, then each setting in declaration order.
        #expect(named == ["--what", "nonsense in \(config)", "TESSERA_IDLE_TIMEOUT", "maxAgeSeconds in \(config)", "--avif-speed"])
        // The values that could be read are, with their origins; the configuration's own problems come after.
        #expect(settings.server.tableCapacity == 77)
        #expect(settings.origins["tableCapacity"] == ServeSettings.Origin(spelling: "tableCapacity in \(config)", shown: "77"))
        #expect(settings.origins["listen"] == ServeSettings.Origin(spelling: "TESSERA_LISTEN", shown: "127.0.0.1:9"))
        #expect(settings.origins["limits.maximumConcurrentDecodes"]?.spelling == "--max-decodes")
        #expect(settings.origins["maxAgeSeconds"] == nil, "a value with a problem keeps the default")
        #expect(settings.server.problems().map(\.description) == ["limits must be positive"])
        #expect(throws: ServeSettingError.self) { try ServeSettingsReader().read(arguments: ["--what"], environment: [:]) }
    }

    @Test("an older spelling of a renamed setting keeps working, as flag, variable and file key")
    func aliases() throws {
        let declaration = ServeSetting.value("limits.maximumConcurrentDecodes", flag: "max-decodes", environment: "TESSERA_MAX_DECODES",
                                             aliases: ["--decodes", "TESSERA_DECODES", "decodes"], default: "4", "Decodes at once",
                                             as: Int.self) { $1.server.limits.maximumConcurrentDecodes = $0 }
        let reader = ServeSettingsReader(declarations: [declaration])
        #expect(try reader.read(arguments: ["--decodes", "7"], environment: [:]).server.limits.maximumConcurrentDecodes == 7)
        #expect(try reader.read(arguments: [], environment: ["TESSERA_DECODES": "6"]).server.limits.maximumConcurrentDecodes == 6)
        #expect(try reader.read(file: .object(["decodes": .integer(5)]), named: "f").server.limits.maximumConcurrentDecodes == 5)
        #expect(throws: ServeSettingError(setting: "TESSERA_DECODES", value: "x", reason: "is not a whole number")) {
            try reader.read(arguments: [], environment: ["TESSERA_DECODES": "x"])
        }
    }

    @Test("every declared flag is in tessera serve --help, with its variable")
    func help() {
        let help = ServeCommand.helpMessage()
        for setting in ServeSettings.declarations {
            if let flag = setting.flag { #expect(help.contains("--" + flag), "\(flag)") }
            if setting.flag != nil, let variable = setting.environment { #expect(help.contains(variable), "\(variable)") }
        }
    }

    @Test("a configuration encoded as JSON decodes, through the declaration, to the same configuration")
    func encodedRoundTrip() throws {
        var configuration = try Self.settings(["--listen", "0.0.0.0:9000", "--preset", "card:320x200:fill", "--signing-key", "k1:s1",
                                               "--allow-range", "10.0.0.0/8", "--allowed-widths", "160,320", "--fallback-image", "/f.png",
                                               "--fallback-status", "410", "--source", "photos=s3://images/p", "--s3-path-style",
                                               "--request-timeout", "1500ms", "--decoding", "strict", "--no-gallery"]).server
        configuration.quality.avif = 55
        configuration.connections.maximumConnections = 100
        let decoded = try JSONDecoder().decode(ServerConfiguration.self, from: JSONEncoder().encode(configuration))
        #expect(decoded == configuration)
        #expect(decoded != ServerConfiguration(root: "/srv/images"), "the values above are not the defaults")
    }

    @Test("every setting is declared once: no flag, variable or file key twice")
    func declaredOnce() {
        let declarations = ServeSettings.declarations
        let names = declarations.flatMap { setting in
            [setting.flag.map { "--" + $0 }, setting.environment, setting.isInFile ? setting.key : nil].compactMap { $0 } + setting.aliases
        }
        #expect(Set(names).count == names.count, "\(names)")
        #expect(Set(declarations.map(\.key)).count == declarations.count)
    }
}
