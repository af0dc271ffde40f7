import PhotoWallCore
@testable import PhotoWallHTTP
import PhotoWallTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Shutdown")
struct ShutdownTests {
    /// A request in progress completes with 200 while `shutdown()` runs; new connections are refused
    /// from the moment shutdown starts.
    @Test func gracefulShutdownFinishesRequestsInProgress() throws {
        let entered = Box(false)
        let release = Box(false)
        var router = Router()
        router.add("GET", "/slow") { _ in
            .buffered(maxBodyBytes: 0) { _ in
                entered.update { $0 = true }
                _ = eventually(timeoutSeconds: 5) { release.value }
                return .text("finished", status: 200)
            }
        }
        var configuration = HTTPServer.Configuration(logger: Logger(label: "t", level: .error))
        configuration.eventThreads = 2
        let server = HTTPServer(configuration: configuration, router: router)
        let port = try server.start()

        let response = Box<TestHTTPResponse?>(nil)
        let client = TestThread {
            let r = try? TestHTTPClient(port: port).request("GET", "/slow")
            response.update { $0 = r }
        }
        #expect(eventually { entered.value })

        let stopper = TestThread { server.shutdown(gracePeriodSeconds: 5) }
        // While the handler still runs, the listening socket already refuses connections.
        #expect(eventually { isConnectionRefused(port: port) })
        #expect(response.value == nil)
        release.update { $0 = true }

        #expect(client.join())
        #expect(stopper.join())
        let r = try #require(response.value)
        #expect(r.status == 200)
        #expect(r.text == "finished")
        #expect(r.header("Connection")?.lowercased() == "close")
        #expect(isConnectionRefused(port: port))
        server.shutdown() // again: no-op
    }

    /// When the grace period runs out, a handler still running is abandoned and its connection closed;
    /// shutdown does not wait for it.
    @Test func shutdownAfterGracePeriodClosesStuckRequests() throws {
        let entered = Box(false)
        let release = Box(false)
        let finished = Box(false)
        var router = Router()
        router.add("GET", "/stuck") { _ in
            .buffered(maxBodyBytes: 0) { _ in
                entered.update { $0 = true }
                _ = eventually(timeoutSeconds: 10) { release.value }
                finished.update { $0 = true }
                return .text("late", status: 200)
            }
        }
        let log = AccessRecorder()
        var configuration = HTTPServer.Configuration(logger: Logger(label: "t", level: .error))
        configuration.onRequestCompleted = { log.append($0) }
        let server = HTTPServer(configuration: configuration, router: router)
        let port = try server.start()
        let client = try TestHTTPClient(port: port)
        try client.sendHead("GET", "/stuck")
        #expect(eventually { entered.value })

        let started = monotonicSeconds()
        server.shutdown(gracePeriodSeconds: 0.3)
        let took = monotonicSeconds() - started
        #expect(took >= 0.3 && took < 3)
        #expect(client.waitForPeerClose(timeoutSeconds: 2))
        #expect(log.wait(forCount: 1).map(\.status) == [nil])
        release.update { $0 = true }
        #expect(eventually { finished.value }) // the handler ran to its end; its response was dropped
        usleep(50_000)
        #expect(log.all.count == 1)
    }

    /// A worker resumes its connection after handing the response over, outside the request's lock.
    /// Shutdown then no longer finds the connection suspended, so it must wait for that resume before
    /// stopping the daemon: stopping with the connection still suspended aborts the process
    /// (libmicrohttpd 0.9.75), and a resume after the stop would touch freed memory.
    @Test func shutdownWaitsForAResumeInProgress() throws {
        let inWindow = Box(false)
        let release = Box(false)
        var router = Router()
        router.add("GET", "/x") { _ in .buffered(maxBodyBytes: 0) { _ in .text("done", status: 200) } }
        var configuration = HTTPServer.Configuration(logger: Logger(label: "t", level: .error))
        configuration.beforeResumeForTesting = {
            inWindow.update { $0 = true }
            _ = eventually(timeoutSeconds: 10) { release.value }
        }
        let server = HTTPServer(configuration: configuration, router: router)
        let port = try server.start()
        let client = TestThread { _ = try? TestHTTPClient(port: port).request("GET", "/x") }
        #expect(eventually { inWindow.value })

        let stopped = Box(false)
        let stopper = TestThread {
            server.shutdown(gracePeriodSeconds: 0)
            stopped.update { $0 = true }
        }
        usleep(300_000)
        #expect(!stopped.value)  // waiting for the resume, not stopping the daemon under it
        release.update { $0 = true }
        #expect(stopper.join())
        #expect(stopped.value)
        #expect(client.join())
        #expect(isConnectionRefused(port: port))
    }

    /// Idle keep-alive connections do not hold up shutdown.
    @Test func idleConnectionsDoNotDelayShutdown() throws {
        var router = Router()
        router.add("GET", "/x") { _ in .immediate(.text("x", status: 200)) }
        let server = HTTPServer(configuration: .init(logger: Logger(label: "t", level: .error)), router: router)
        let port = try server.start()
        let client = try TestHTTPClient(port: port)
        #expect(try client.request("GET", "/x").status == 200)
        let started = monotonicSeconds()
        server.shutdown(gracePeriodSeconds: 5)
        #expect(monotonicSeconds() - started < 1)
        #expect(client.waitForPeerClose(timeoutSeconds: 2))
    }

    @Test func runUntilSignalStopsOnSIGTERM() throws {
        var router = Router()
        router.add("GET", "/x") { _ in .immediate(.text("x", status: 200)) }
        var configuration = HTTPServer.Configuration(logger: Logger(label: "t", level: .error))
        configuration.shutdownGracePeriodSeconds = 1
        let server = HTTPServer(configuration: configuration, router: router)
        let port = try server.start()
        #expect(try TestHTTPClient(port: port).request("GET", "/x").status == 200)
        let installed = Box(false)
        let runner = TestThread { server.runUntilSignal(onSignalHandlersInstalled: { installed.update { $0 = true } }) }
        #expect(eventually { installed.value })
        kill(getpid(), SIGTERM)
        #expect(runner.join(timeoutSeconds: 5))
        #expect(isConnectionRefused(port: port))
    }
}
