import Tessera

/// Three formats in two families that the cache and manager tests share: 32 px bgr565 and 64 px bgra32
/// in `users`, 16 px gray8 in `misc`, 50 entries each.
public let small = ImageFormat(name: "small", family: "users", style: .bgr565, size: PixelSize(width: 32, height: 32), maximumCount: 50)
/// 64 px bgra32 in the family `users`.
public let medium = ImageFormat(name: "medium", family: "users", style: .bgra32, size: PixelSize(width: 64, height: 64), maximumCount: 50)
/// 16 px gray8 in the family `misc`.
public let icon = ImageFormat(name: "icon", family: "misc", style: .gray8, size: PixelSize(width: 16, height: 16), maximumCount: 50)
