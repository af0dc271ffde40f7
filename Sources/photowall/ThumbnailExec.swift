#if canImport(Glibc)
import Glibc
#endif

/// `photowall thumbnail IN OUT …`: executes `photowall-thumbnail` from this executable's folder
/// (symlinks resolved, as `make install` lays them out) with the same arguments.
///
/// The thumbnail tool is a program of its own so that it maps only the imaging libraries; this
/// executable's runtime (Foundation, libpq, libcurl, …) would otherwise be most of its memory.
///
/// - Returns: Only on failure to start it: 1 with a one-line reason on stderr.
func runThumbnailCommand(_ args: [String]) -> Int32 {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
    guard length > 0 else {
        Terminal.write("photowall thumbnail: cannot find this executable's folder\n", to: 2)
        return 1
    }
    let executable = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let folder = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    let tool = folder + "/photowall-thumbnail"
    let argv = ([tool] + args).map { strdup($0) } + [nil]
    execv(tool, argv)
    let reason = String(cString: strerror(errno))
    Terminal.write("photowall thumbnail: cannot run \(tool): \(reason)\n", to: 2)
    return 1
}
