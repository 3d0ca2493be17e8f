package dev.readygate.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.ClassPathResource;
import tools.jackson.databind.json.JsonMapper;

/**
 * The page as the server sends it (issue 25 item 6): the verdict, its reason, the current start, the probes and the
 * restart history are in the HTML, escaped, before any script runs; the document the page's script draws is in a data
 * block that cannot end itself.
 */
class StatusPageRendererTests {

    static final JsonMapper json = JsonMapper.builder().build();

    static final String HOSTILE = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>";

    static String template() throws IOException {
        return new ClassPathResource(StatusPage.PAGE).getContentAsString(StandardCharsets.UTF_8);
    }

    static String render(String document) throws IOException {
        return new StatusPageRenderer(template(), json).render(json.readTree(document));
    }

    @Test
    void pageCarriesTheVerdictReasonAndDetailWithoutScript() throws IOException {
        String page = render("""
                {"ready": false, "state": "down", "reason": "engine_down", "detail": "connection refused",
                 "since": "2026-12-03T07:00:00Z", "now": "2026-12-03T07:02:05Z",
                 "engine": {"model": "Qwen/Qwen3-0.6B", "dialect": "vllm", "version": "0.31.0"},
                 "restarts": {"current": {"provisionalPath": "cold",
                                          "phases": {"engine_start": "2026-12-03T06:59:58Z",
                                                     "port_listening": "2026-12-03T07:00:03.250Z"}},
                              "restartLoop": false, "history": []}}
                """);

        assertThat(page)
                .startsWith("<!DOCTYPE html>")
                .contains("<title>NOT READY · down · readygate</title>")
                .contains("<div id=\"verdict\" class=\"not-ready\">")
                .contains("<div id=\"verdict-word\">NOT READY</div>")
                .contains("<dd id=\"verdict-state\">down</dd>")
                .contains("<dd id=\"verdict-reason\"><span class=\"tag bad\">engine_down</span></dd>")
                .contains("<dd id=\"verdict-detail\">connection refused</dd>")
                .contains("2026-12-03 07:00:00 UTC</span><span class=\"muted\"> · for 2 min 5 s</span>")
                .contains("<dd id=\"verdict-engine\">Qwen/Qwen3-0.6B · vLLM 0.31.0</dd>")
                .contains("<th>port listening</th><td class=\"num\">07:00:03.250 UTC</td><td class=\"num\">+5.250 s")
                .contains("<div id=\"restart-loop\" class=\"banner warn hidden\"></div>")
                .contains("No engine start recorded yet.")
                .doesNotContain("LOADING")
                .doesNotContain("<!--{");
    }

    @Test
    void aReadyEngineShowsNoEmptyReasonRows() throws IOException {
        String page = render("""
                {"ready": true, "state": "ready", "reason": null, "detail": null, "restarts": {"restartLoop": true}}
                """);

        assertThat(page)
                .contains("<div id=\"verdict\" class=\"ready\">")
                .contains("<div id=\"verdict-word\">READY</div>")
                .contains("<dt id=\"verdict-reason-label\" class=\"hidden\">")
                .contains("<dt id=\"verdict-detail-label\" class=\"hidden\">")
                .contains("<div id=\"restart-loop\" class=\"banner warn\">RESTART LOOP: the engine started too"
                        + " often within the configured window</div>");
    }

    @Test
    void anEmptyOrNullDocumentStillRendersAPage() throws IOException {
        for (String document : new String[] {"{}", "null", "[]"}) {
            assertThat(render(document))
                    .as(document)
                    .contains("<div id=\"verdict-word\">NOT READY</div>")
                    .contains("No engine start recorded yet.")
                    .contains("No canary probe has run yet.");
        }
    }

    /** Engine texts (an error message, log lines, a path) never become markup, and cannot end the data block. */
    @Test
    void hostileEngineTextIsEscapedEverywhereItIsShown() throws IOException {
        String template = template();
        String page = render("""
                {"ready": false, "state": %1$s, "reason": %1$s, "detail": %1$s, "since": %1$s, "now": %1$s,
                 "engine": {"model": %1$s, "dialect": %1$s, "version": %1$s, "baseUrl": %1$s},
                 "probes": {"canary": {"last": {"outcome": %1$s, "at": %1$s, "reason": %1$s, "detail": %1$s}},
                            "heavyProbes": %1$s, "lastSkipped": %1$s,
                            "circuitBreaker": {"state": %1$s}},
                 "restarts": {"current": {"provisionalPath": %1$s, "phases": {%1$s: %1$s}},
                              "history": [{"path": %1$s, "outcome": %1$s, "notReadyReason": %1$s,
                                           "startFailure": %1$s, "fallbackReason": %1$s, "engineStart": %1$s,
                                           "recovery": {"words": %1$s}, "vllmVersion": %1$s, "revision": %1$s,
                                           "readyIn": {"kind": %1$s, "text": %1$s, "why": %1$s},
                                           "phaseOffsetsSeconds": {%1$s: 1.0}, "evidence": [%1$s],
                                           "stop": {"traffic": {"inFlight": %1$s, "finished": %1$s, "cut": %1$s,
                                                                "cutTokens": %1$s}}}]}}
                """.formatted(json.writeValueAsString(HOSTILE)));

        assertThat(page)
                .contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;")
                .doesNotContain("<img")
                .doesNotContain("alert(1)</script>")
                .contains("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e");
        // Two script elements: the data block, which does not run, and the page's own, whose hash the CSP allows.
        assertThat(StatusPageBrowserTests.occurrences(page, "<script")).isEqualTo(2);
        assertThat(StatusPageBrowserTests.occurrences(page, "</script>")).isEqualTo(2);
        assertThat(page).contains("<script type=\"application/json\" id=\"status-data\">");
        assertThat(StatusPage.scriptHash(page)).isEqualTo(StatusPage.scriptHash(template));
        // The data block reads back as the document it was rendered from.
        String data = page.substring(
                page.indexOf("id=\"status-data\">") + "id=\"status-data\">".length(),
                page.indexOf("</script>", page.indexOf("id=\"status-data\">")));
        assertThat(json.readTree(data).path("detail").asString()).isEqualTo(HOSTILE);
    }

    /** Issue 25 item 5 in the server's HTML: red "never" only for the start that never became ready. */
    @Test
    void historyRendersEveryReadyInCellAsReadygateDecidedIt() throws IOException {
        String page = render("""
                {"ready": true, "state": "ready", "restarts": {"history": [
                  {"outcome": "not_ready", "path": "cold", "readyIn": {"kind": "not_yet", "text": "not yet",
                   "why": "this start still runs and has not been verified ready yet"}},
                  {"outcome": "ready", "path": "cold", "readyIn": {"kind": "measured", "text": "12.50\\u00a0s"}},
                  {"outcome": "ready", "path": "cold", "readyIn": {"kind": "at_most", "text": "\\u2264\\u00a03.10\\u00a0s",
                   "why": "a bound"}},
                  {"outcome": "ready", "path": "cold", "readyIn": {"kind": "at_least", "text": "\\u2265\\u00a03.10\\u00a0s",
                   "why": "a bound"}},
                  {"outcome": "ready", "path": "preload_hit", "readyIn": {"kind": "first_seen", "text": "first seen",
                   "why": "readygate started beside the running engine"}},
                  {"outcome": "not_ready", "path": "cold", "readyIn": {"kind": "never", "text": "never",
                   "why": "this start ended without ever being verified ready"}},
                  {"outcome": "unknown", "path": "cold", "readyIn": {"kind": "unknown", "text": "unknown"}}]}}
                """);

        assertThat(StatusPageBrowserTests.occurrences(page, "<tr class=\"restart\">"))
                .isEqualTo(7);
        assertThat(page)
                .contains("<td class=\"num\"><span>12.50\u00a0s</span></td>")
                .contains("<td class=\"num\"><span title=\"a bound\">\u2264\u00a03.10\u00a0s</span></td>")
                .contains("<td class=\"num\"><span title=\"a bound\">\u2265\u00a03.10\u00a0s</span></td>")
                .contains(
                        "<span class=\"muted\" title=\"readygate started beside the running engine\">first seen</span>")
                .contains(">not yet</span>")
                .contains(">unknown</span>")
                .contains("(7 starts, newest first)");
        assertThat(StatusPageBrowserTests.occurrences(page, "class=\"never-text\""))
                .isEqualTo(1);
        assertThat(page)
                .contains("<span class=\"never-text\" title=\"this start ended without ever being verified ready\">"
                        + "never</span>");
    }

    /**
     * Issue 27 item 5 in the server's HTML: a stop the gateway counted says what it had in flight and what became of
     * it, in the start's outcome cell; a stop without the gateway's count (gateway mode off) adds nothing.
     */
    @Test
    void historyShowsTheWorkEachStopLostOnlyWhereTheGatewayCountedIt() throws IOException {
        String page = render("""
                {"ready": true, "state": "ready", "restarts": {"history": [
                  {"outcome": "ready", "path": "cold", "stop": null},
                  {"outcome": "ready", "path": "cold",
                   "stop": {"how": "pod_stopped", "requestsRunning": 7.0,
                            "traffic": {"inFlight": 7, "finished": 5, "cut": 2, "cutTokens": 1234}}},
                  {"outcome": "ready", "path": "cold",
                   "stop": {"how": "went_away", "requestsRunning": 3.0, "traffic": null}},
                  {"outcome": "ready", "path": "cold", "stop": {"how": "went_away", "requestsRunning": 0.0}}]}}
                """);

        assertThat(StatusPageBrowserTests.occurrences(page, "class=\"traffic")).isEqualTo(1);
        assertThat(page)
                .contains("<div class=\"traffic cut\" title=\"")
                .contains("\">gateway: 7 in flight, 5 finished, 2 cut (1234 tokens streamed)</div>");
        String cleanStop = render("""
                {"restarts": {"history": [{"outcome": "ready", "path": "cold",
                  "stop": {"how": "pod_stopped", "traffic": {"inFlight": 4, "finished": 4, "cut": 0, "cutTokens": 0}}}]}}
                """);
        assertThat(cleanStop)
                .contains("<div class=\"traffic\" title=\"")
                .contains("\">gateway: 4 in flight, 4 finished, none cut</div>");
        String uncounted = render("""
                {"restarts": {"history": [{"outcome": "ready", "path": "cold",
                  "stop": {"how": "went_away", "traffic": null}}]}}
                """);
        int table = uncounted.indexOf("<table id=\"restart-table\">");
        assertThat(uncounted.substring(table, uncounted.indexOf("</table>", table)))
                .contains("<tr class=\"restart\">")
                .doesNotContain("traffic")
                .doesNotContain("gateway");
    }

    /** Issue 25 item 9: a skip is shown only while {@code /status} gives one; the breaker line says its state now. */
    @Test
    void heavyProbesShowALastSkipOnlyWhileThereIsOne() throws IOException {
        String open = canarySection("""
                {"probes": {"heavyProbes": "suspended after repeated failures",
                            "lastSkipped": "heavy probes suspended after repeated failures (circuit breaker open)",
                            "circuitBreaker": {"state": "open", "failedVerifications": 3, "suspendAfterFailures": 3,
                                               "refusedVerifications": 4}}}
                """);
        String closed = canarySection("""
                {"probes": {"heavyProbes": "closed", "lastSkipped": null,
                            "circuitBreaker": {"state": "closed", "failedVerifications": 0, "suspendAfterFailures": 3,
                                               "refusedVerifications": 4}}}
                """);

        assertThat(open)
                .contains("<dt>last skipped</dt><dd>heavy probes suspended after repeated failures (circuit breaker"
                        + " open)</dd>")
                .contains("<dt>circuit breaker</dt><dd>open (3 of 3 failed verifications; 4 refused)</dd>");
        assertThat(closed)
                .doesNotContain("last skipped")
                .doesNotContain("circuit breaker open")
                .doesNotContain("suspended")
                .contains("<dt>circuit breaker</dt><dd>closed (0 of 3 failed verifications; 4 refused)</dd>");
    }

    /** The canary probe's section as the server rendered it (the page's script names the same words elsewhere). */
    static String canarySection(String document) throws IOException {
        String page = render(document);
        int at = page.indexOf("<section id=\"probe-canary\">");
        return page.substring(at, page.indexOf("</section>", at));
    }

    @Test
    void aTemplateThatDoesNotMarkEveryRegionIsRefused() throws IOException {
        String template = template();
        assertThatIllegalStateException()
                .isThrownBy(() -> new StatusPageRenderer(template.replace("<!--{data}--><!--{/data}-->", ""), json))
                .withMessageContaining("DATA");
        assertThatIllegalStateException()
                .isThrownBy(() -> new StatusPageRenderer(template + "<!--{elsewhere}--><!--{/elsewhere}-->", json))
                .withMessageContaining("elsewhere");
    }

    @Test
    void spanSaysHowLongAsThePageDoes() {
        assertThat(StatusPageRenderer.span(java.time.Duration.ofSeconds(42))).isEqualTo("42 s");
        assertThat(StatusPageRenderer.span(java.time.Duration.ofSeconds(185))).isEqualTo("3 min 5 s");
        assertThat(StatusPageRenderer.span(java.time.Duration.ofMinutes(130))).isEqualTo("2 h 10 min");
        assertThat(StatusPageRenderer.span(java.time.Duration.ofHours(76))).isEqualTo("3 d 4 h");
    }
}
