import Testing
@testable import TesseraHTTP
import TesseraTestSupport

/// The per-host circuit breaker of `HTTPDataLoader`, on an injected clock.
@Suite("refused hosts")
struct RefusedHostsTests {
    @Test("a refused host is refused locally for the cooldown, then tried again; an answer forgets it")
    func cooldown() {
        let hosts = RefusedHosts(cooldown: .seconds(2))
        let start = ContinuousClock.now
        #expect(!hosts.isOpen("http://a:80", now: start))
        hosts.refused("http://a:80", now: start)
        #expect(hosts.isOpen("http://a:80", now: start + .seconds(1)))
        #expect(!hosts.isOpen("http://a:81", now: start + .seconds(1)), "another port of the same host is not affected")
        #expect(!hosts.isOpen("http://a:80", now: start + .seconds(2)), "tried again once the cooldown has passed")
        hosts.refused("http://a:80", now: start + .seconds(3))
        hosts.answered("http://a:80")
        #expect(!hosts.isOpen("http://a:80", now: start + .seconds(3)))
    }

    @Test("a zero cooldown turns the breaker off")
    func off() {
        let hosts = RefusedHosts(cooldown: .zero)
        let start = ContinuousClock.now
        hosts.refused("http://a:80", now: start)
        #expect(!hosts.isOpen("http://a:80", now: start))
    }
}
