#if Serving
import Foundation

/// A list of sizes in pixels, each 1 or more: comma-separated in a flag or a variable (`160,320,640`), a
/// JSON array of numbers in the config file.
public struct PositiveSizes: SettingValue, Hashable {
    /// The sizes, in the order given.
    public var values: [Int]

    /// `N,N,…`.
    public static var syntax: String { "a comma-separated list of positive sizes" }

    /// `160,320,640`.
    public init(settingText text: String) throws(SettingValueFailure) {
        let values = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !values.isEmpty, values.allSatisfy({ ($0 ?? 0) > 0 }) else { throw SettingValueFailure("is not \(Self.syntax)") }
        self.values = values.compactMap { $0 }
    }

    /// A JSON array of positive whole numbers, or a string read as text.
    public init(settingJSON json: JSONValue) throws(SettingValueFailure) {
        switch json {
        case .string(let text):
            self = try PositiveSizes(settingText: text)
        case .array(let members):
            let values = members.map { member -> Int? in if case .integer(let value) = member, value > 0 { value } else { nil } }
            guard values.allSatisfy({ $0 != nil }) else { throw SettingValueFailure("is not a list of positive sizes") }
            self.values = values.compactMap { $0 }
        default:
            throw SettingValueFailure("is not a list of positive sizes")
        }
    }
}
#endif
