package dev.readygate.status;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The status page as the server sends it: the page's regions marked {@code <!--{name}-->...<!--{/name}-->} get the
 * verdict, the current start, the probes, the engine and the restart history of one {@code /status} document as HTML,
 * and the document itself goes into a JSON data block that the page's script draws at once and then refreshes. So the
 * page reads without its script (a screenshot at load, a text browser, a paste into a ticket). Every string from the
 * document is escaped; the data block cannot close itself. The template is split once; a page is one pass over it.
 * It is over 300 lines because it is the page's one renderer: each region is a few small private functions of the
 * document, sharing the escaping and the markup helpers that keep the page consistent; split by region, the helpers
 * would have to become a shared surface of their own.
 */
final class StatusPageRenderer {

    /** The regions of the page the server fills; each must be marked exactly once. */
    enum Region {
        TITLE,
        UPDATED,
        VERDICT,
        RESTART_LOOP,
        CURRENT_START,
        PROBE_REPRESENTATIVE,
        PROBE_CANARY,
        ENGINE,
        HISTORY_COUNT,
        HISTORY,
        DATA;

        String marker() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    private static final Pattern MARKED = Pattern.compile("<!--\\{([a-z-]+)\\}-->.*?<!--\\{/\\1\\}-->", Pattern.DOTALL);

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter PRECISE =
            DateTimeFormatter.ofPattern("HH:mm:ss.SSS", Locale.ROOT).withZone(ZoneOffset.UTC);

    private static final String NONE = "<span class=\"muted\">—</span>";

    /** What the gateway's count of a stop says, as the page's script titles it too. */
    private static final String TRAFFIC_WHY =
            "the gateway's own count of the requests it had forwarded to this start that"
                    + " were in flight at its stop: those that finished after it (in the drain), and those cut (by the engine"
                    + " going away or the drain's deadline), with the token events the cut ones had streamed to their clients;"
                    + " clients must retry the cut ones";

    /** The history's columns, as the page's table has them. */
    private static final int HISTORY_COLUMNS = 12;

    /** How each kind of "ready in" cell looks ({@link dev.readygate.restart.ReadyIn}): red only for never. */
    private static final Map<String, String> READY_IN_CLASS =
            Map.of("measured", "", "at_most", "", "at_least", "", "never", "never-text");

    private static final Set<String> PATHS = Set.of("cold", "preload_hit", "preload_fallback", "snapshot_restore");

    private final List<String> literals = new ArrayList<>();
    private final List<Region> regions = new ArrayList<>();
    private final JsonMapper json;

    StatusPageRenderer(String template, JsonMapper json) {
        this.json = json;
        Matcher marked = MARKED.matcher(template);
        int from = 0;
        Set<Region> seen = EnumSet.noneOf(Region.class);
        while (marked.find()) {
            Region region = region(marked.group(1));
            if (!seen.add(region)) {
                throw new IllegalStateException("the status page marks the region " + region.marker() + " twice");
            }
            literals.add(template.substring(from, marked.start()));
            regions.add(region);
            from = marked.end();
        }
        literals.add(template.substring(from));
        if (seen.size() != Region.values().length) {
            Set<Region> missing = EnumSet.complementOf(EnumSet.copyOf(seen));
            throw new IllegalStateException("the status page does not mark the regions " + missing);
        }
    }

    private static Region region(String marker) {
        for (Region region : Region.values()) {
            if (region.marker().equals(marker)) {
                return region;
            }
        }
        throw new IllegalStateException("the status page marks an unknown region: " + marker);
    }

    /** The page for one {@code /status} document. */
    String render(JsonNode status) {
        StringBuilder page = new StringBuilder(literals.getFirst().length() * 2);
        for (int i = 0; i < regions.size(); i++) {
            page.append(literals.get(i));
            page.append(region(regions.get(i), status));
        }
        return page.append(literals.getLast()).toString();
    }

    private String region(Region region, JsonNode status) {
        return switch (region) {
            case TITLE ->
                "<title>" + esc(verdictWord(status) + " · " + text(status.path("state")) + " · readygate") + "</title>";
            case UPDATED ->
                "<span id=\"meta-updated\">as of " + esc(time(status.path("now")))
                        + ", as readygate rendered it</span>";
            case VERDICT -> verdict(status);
            case RESTART_LOOP ->
                // Empty while there is none: a text browser or a paste shows a hidden banner's words.
                isTrue(status.path("restarts").path("restartLoop"))
                        ? "<div id=\"restart-loop\" class=\"banner warn\">RESTART LOOP: the engine started too often"
                                + " within the configured window</div>"
                        : "<div id=\"restart-loop\" class=\"banner warn hidden\"></div>";
            case CURRENT_START -> body(currentStart(status));
            case PROBE_REPRESENTATIVE -> body(probe(status, "representative"));
            case PROBE_CANARY -> body(probe(status, "canary") + heavyProbes(status.path("probes")));
            case ENGINE -> body(engine(status.path("engine")));
            case HISTORY_COUNT -> {
                int starts = status.path("restarts").path("history").size();
                yield "<span class=\"muted\" id=\"history-count\">(" + starts + (starts == 1 ? " start" : " starts")
                        + ", newest first)</span>";
            }
            case HISTORY -> history(status.path("restarts").path("history"));
            case DATA -> data(status);
        };
    }

    // ---- the verdict

    private static boolean ready(JsonNode status) {
        return isTrue(status.path("ready"));
    }

    private static String verdictWord(JsonNode status) {
        return ready(status) ? "READY" : "NOT READY";
    }

    private static String verdict(JsonNode status) {
        boolean ready = ready(status);
        JsonNode reason = status.path("reason");
        JsonNode detail = status.path("detail");
        // A ready engine has no reason to give: no empty rows, as the page's script draws it.
        String reasonHidden = ready && !has(reason) ? " class=\"hidden\"" : "";
        String detailHidden = ready && !has(detail) ? " class=\"hidden\"" : "";
        JsonNode engine = status.path("engine");
        String dialect = !has(engine.path("dialect")) || "vllm".equals(text(engine.path("dialect")))
                ? "vLLM"
                : text(engine.path("dialect"));
        JsonNode version = has(engine.path("version")) ? engine.path("version") : engine.path("vllmVersion");
        return "<div id=\"verdict\" class=\"" + (ready ? "ready" : "not-ready") + "\">\n"
                + "    <div id=\"verdict-word\">" + verdictWord(status) + "</div>\n"
                + "    <dl id=\"verdict-facts\">\n"
                + "      <dt>state</dt><dd id=\"verdict-state\">" + esc(text(status.path("state"))) + "</dd>\n"
                + "      <dt id=\"verdict-reason-label\"" + reasonHidden + ">reason</dt><dd id=\"verdict-reason\""
                + reasonHidden + ">" + (has(reason) ? tag("bad", text(reason)) : NONE) + "</dd>\n"
                + "      <dt id=\"verdict-detail-label\"" + detailHidden + ">detail</dt><dd id=\"verdict-detail\""
                + detailHidden + ">" + esc(text(detail)) + "</dd>\n"
                + "      <dt>since</dt><dd id=\"verdict-since\">" + since(status) + "</dd>\n"
                + "      <dt>engine</dt><dd id=\"verdict-engine\">"
                + esc(text(engine.path("model")) + " · " + dialect + " " + text(version)) + "</dd>\n"
                + "    </dl>\n"
                + "  </div>";
    }

    private static String since(JsonNode status) {
        Instant since = instant(status.path("since"));
        if (since == null) {
            return NONE;
        }
        Instant now = instant(status.path("now"));
        return "<span title=\"" + esc(since.toString()) + "\"><span class=\"mono\">" + esc(TIME.format(since))
                + "</span>"
                + (now == null ? "" : "<span class=\"muted\"> · for " + span(Duration.between(since, now)) + "</span>")
                + "</span>";
    }

    // ---- the current start, the probes, the engine

    private static String currentStart(JsonNode status) {
        JsonNode current = status.path("restarts").path("current");
        JsonNode phases = current.path("phases");
        Instant start = instant(phases.path("engine_start"));
        StringBuilder rows = new StringBuilder();
        for (Map.Entry<String, JsonNode> phase : phases.properties()) {
            Instant at = instant(phase.getValue());
            rows.append("<tr><th>")
                    .append(esc(phase.getKey().replace('_', ' ')))
                    .append("</th><td class=\"num\">")
                    .append(at == null ? esc(text(phase.getValue())) : esc(PRECISE.format(at) + " UTC"))
                    .append("</td><td class=\"num\">")
                    .append(
                            at == null || start == null
                                    ? ""
                                    : esc(String.format(
                                            Locale.ROOT,
                                            "+%.3f s",
                                            Duration.between(start, at).toMillis() / 1000.0)))
                    .append("</td></tr>");
        }
        String path = kv(List.<String[]>of(new String[] {
            "provisional path",
            has(current.path("provisionalPath"))
                    ? pathTag(current.path("provisionalPath"))
                            + "<span class=\"muted\"> from the engine log so far</span>"
                    : NONE
        }));
        return path
                + (rows.isEmpty()
                        ? "<p class=\"muted\">No phase of this start seen yet.</p>"
                        : "<table class=\"mini\"><tbody>" + rows + "</tbody></table>");
    }

    private static String probe(JsonNode status, String kind) {
        JsonNode probe = status.path("probes").path(kind);
        JsonNode last = probe.path("last");
        JsonNode failure = probe.path("lastFailure");
        StringBuilder out = new StringBuilder();
        if (!has(last)) {
            out.append("<p class=\"muted\">No ").append(kind).append(" probe has run yet.</p>");
        } else {
            out.append(report(last));
        }
        if (has(failure) && !failure.path("at").equals(last.path("at"))) {
            out.append("<div class=\"failure\"><h3>Last failure</h3>")
                    .append(report(failure))
                    .append("</div>");
        }
        return out.toString();
    }

    private static String report(JsonNode report) {
        List<String[]> pairs = new ArrayList<>();
        pairs.add(new String[] {"outcome", outcomeTag(report.path("outcome"))});
        pairs.add(new String[] {"at", esc(time(report.path("at")))});
        if (has(report.path("reason"))) {
            pairs.add(new String[] {"reason", tag("bad", text(report.path("reason")))});
        }
        if (has(report.path("detail"))) {
            pairs.add(new String[] {"detail", esc(text(report.path("detail")))});
        }
        return kv(pairs);
    }

    /**
     * The heavy probes' guards as they are now. Why a heavy probe was last skipped is shown only while {@code /status}
     * gives it: readygate forgets a skip once a verification ran after it.
     */
    private static String heavyProbes(JsonNode probes) {
        List<String[]> pairs = new ArrayList<>();
        pairs.add(new String[] {"heavy probes", esc(text(probes.path("heavyProbes")))});
        JsonNode breaker = probes.path("circuitBreaker");
        if (has(breaker)) {
            pairs.add(new String[] {
                "circuit breaker",
                esc(text(breaker.path("state")) + " (" + text(breaker.path("failedVerifications")) + " of "
                        + text(breaker.path("suspendAfterFailures")) + " failed verifications; "
                        + text(breaker.path("refusedVerifications")) + " refused)")
            });
        }
        JsonNode budget = probes.path("tokenBudget");
        if (has(budget)) {
            pairs.add(new String[] {
                "token budget",
                esc(text(budget.path("tokensLeftThisMinute")) + " of " + text(budget.path("tokensPerMinute"))
                        + " tokens left this minute")
            });
        }
        pairs.add(new String[] {"last heavy probe", esc(time(probes.path("lastHeavyProbeAt")))});
        if (has(probes.path("lastSkipped"))) {
            pairs.add(new String[] {"last skipped", esc(text(probes.path("lastSkipped")))});
        }
        return "<div class=\"failure\">" + kv(pairs) + "</div>";
    }

    private static String engine(JsonNode engine) {
        List<String[]> pairs = new ArrayList<>();
        for (String[] field : new String[][] {
            {"model", "model"},
            {"root", "root"},
            {"max model len", "maxModelLen"},
            {"dialect", "dialect"},
            {"version", "version"},
            {"base URL", "baseUrl"}
        }) {
            pairs.add(new String[] {field[0], esc(text(engine.path(field[1])))});
        }
        return kv(pairs);
    }

    // ---- the restart history

    private static String history(JsonNode history) {
        StringBuilder rows = new StringBuilder("<tbody>");
        int starts = history.size();
        for (int i = 0; i < starts; i++) {
            rows.append(restart(history.get(i), starts - i));
        }
        if (starts == 0) {
            rows.append("<tr><td class=\"muted\" colspan=\"")
                    .append(HISTORY_COLUMNS)
                    .append("\">No engine start recorded yet.</td></tr>");
        }
        return rows.append("</tbody>").toString();
    }

    private static String restart(JsonNode r, int number) {
        StringBuilder path = new StringBuilder(pathTag(r.path("path")));
        if (has(r.path("recovery").path("words"))) {
            path.append("<div class=\"kind\">")
                    .append(esc(text(r.path("recovery").path("words"))))
                    .append("</div>");
        }
        if (has(r.path("fallbackReason"))) {
            path.append(sub("fallback: " + text(r.path("fallbackReason"))));
        }
        StringBuilder outcome = new StringBuilder(outcomeTag(r.path("outcome")));
        if (has(r.path("notReadyReason"))) {
            outcome.append(sub(text(r.path("notReadyReason"))));
        }
        if (has(r.path("startFailure"))) {
            outcome.append(sub(text(r.path("startFailure"))));
        }
        if (isTrue(r.path("wrongWeightsFromCache"))) {
            outcome.append("<div>")
                    .append(tag("bad wraps", "wrong weights from cache"))
                    .append("</div>");
        }
        outcome.append(traffic(r.path("stop").path("traffic")));
        JsonNode memory = r.path("memory");
        JsonNode evidence = r.path("evidence");
        String revision = text(r.path("revision"));
        return "<tr class=\"restart\">"
                + "<td class=\"num\">" + number + "</td>"
                + "<td><span class=\"mono\">" + esc(time(r.path("engineStart"))) + "</span></td>"
                + "<td>" + path + "</td>"
                + "<td>" + outcome + "</td>"
                + "<td class=\"num\">" + readyIn(r.path("readyIn")) + "</td>"
                + "<td>" + phasesReached(r.path("phaseOffsetsSeconds")) + "</td>"
                + memory(memory.path("beforeStart"))
                + memory(memory.path("atReady"))
                + memory(memory.path("afterStop"))
                + "<td class=\"mono\">" + esc(text(r.path("vllmVersion"))) + "</td>"
                + "<td><span class=\"mono\" title=\"" + esc(revision) + "\">"
                + esc(revision.matches("[0-9a-f]{40}") ? revision.substring(0, 10) + "…" : revision) + "</span></td>"
                + "<td>" + evidence.size() + (evidence.size() == 1 ? " line" : " lines")
                + (evidence.size() > 0 ? sub(text(evidence.get(0))) : "") + "</td>"
                + "</tr>";
    }

    /** The "ready in" cell as readygate decided it; red only for a start that never became ready. */
    static String readyIn(JsonNode cell) {
        String kind = text(cell.path("kind"));
        String style = READY_IN_CLASS.getOrDefault(kind, "muted");
        return "<span" + (style.isEmpty() ? "" : " class=\"" + style + "\"")
                + (has(cell.path("why")) ? " title=\"" + esc(text(cell.path("why"))) + "\"" : "") + ">"
                + esc(text(cell.path("text"))) + "</span>";
    }

    /**
     * The gateway's count of a stop's requests in flight, in the start's outcome cell, in the words of the page's
     * script; nothing where the stop has none (gateway mode off). Amber when the stop cut any.
     */
    private static String traffic(JsonNode traffic) {
        if (!traffic.isObject()) {
            return "";
        }
        JsonNode counted = traffic.path("cut");
        long cut = counted.isNumber() ? counted.asLong() : 0;
        return "<div class=\"traffic" + (cut > 0 ? " cut" : "") + "\" title=\"" + esc(TRAFFIC_WHY) + "\">"
                + esc("gateway: " + text(traffic.path("inFlight")) + " in flight, "
                        + text(traffic.path("finished")) + " finished, "
                        + (cut > 0
                                ? cut + " cut (" + text(traffic.path("cutTokens")) + " tokens streamed)"
                                : "none cut"))
                + "</div>";
    }

    private static String phasesReached(JsonNode offsets) {
        String last = null;
        for (Map.Entry<String, JsonNode> phase : offsets.properties()) {
            last = phase.getKey();
        }
        return last == null ? NONE : sub("reached " + last.replace('_', ' '));
    }

    private static String memory(JsonNode moment) {
        if (!has(moment) || !moment.path("usedMiB").isNumber()) {
            return "<td class=\"num muted\">—</td>";
        }
        double mib = moment.path("usedMiB").asDouble();
        String shown = Math.abs(mib) >= 1024
                ? String.format(Locale.ROOT, "%.2f\u00a0GiB", mib / 1024)
                : String.format(Locale.ROOT, "%,d\u00a0MiB", Math.round(mib));
        return "<td class=\"num\"><span class=\"gib\">" + shown + "</span></td>";
    }

    // ---- the document, for the script

    /** The document as a JSON data block: {@code <}, {@code >} and {@code &} escaped, so it cannot end itself. */
    private String data(JsonNode status) {
        String document = json.writeValueAsString(status)
                .replace("<", "\\u003c")
                .replace(">", "\\u003e")
                .replace("&", "\\u0026");
        return "<script type=\"application/json\" id=\"status-data\">" + document + "</script>";
    }

    // ---- small pieces, every string escaped

    private static String body(String content) {
        return "<div class=\"body\">" + content + "</div>";
    }

    private static String kv(List<String[]> pairs) {
        StringBuilder dl = new StringBuilder("<dl class=\"kv\">");
        for (String[] pair : pairs) {
            dl.append("<dt>")
                    .append(esc(pair[0]))
                    .append("</dt><dd>")
                    .append(pair[1])
                    .append("</dd>");
        }
        return dl.append("</dl>").toString();
    }

    private static String tag(String style, String text) {
        return "<span class=\"tag " + style + "\">" + esc(text) + "</span>";
    }

    private static String sub(String text) {
        return "<div class=\"cell-sub clamp\" title=\"" + esc(text) + "\">" + esc(text) + "</div>";
    }

    private static String outcomeTag(JsonNode outcome) {
        if (!has(outcome)) {
            return tag("", "no result yet");
        }
        String value = text(outcome);
        String style = value.equals("passed") || value.equals("ready")
                ? "good"
                : value.equals("failed") || value.equals("not_ready") ? "bad" : "warn";
        return tag(style, value);
    }

    /** A path as the page colours it: an unknown one is drawn as unknown, never used as a class name as it came. */
    private static String pathTag(JsonNode path) {
        String value = has(path) ? text(path) : "unknown";
        String known = PATHS.contains(value) ? value : "unknown";
        return "<span class=\"tag path path-" + known + "\">" + esc(value) + "</span>";
    }

    private static boolean isTrue(JsonNode node) {
        return node.isBoolean() && node.booleanValue();
    }

    private static boolean has(JsonNode node) {
        return !node.isMissingNode()
                && !node.isNull()
                && !(node.isString() && node.asString().isEmpty());
    }

    private static String text(JsonNode node) {
        if (!has(node)) {
            return "—";
        }
        return node.isContainer() ? node.toString() : node.asString();
    }

    private static @Nullable Instant instant(JsonNode node) {
        if (!node.isString()) {
            return null;
        }
        try {
            return Instant.parse(node.asString());
        } catch (DateTimeParseException ex) {
            return null;
        }
    }

    private static String time(JsonNode node) {
        Instant at = instant(node);
        return at == null ? text(node) : TIME.format(at);
    }

    /** How long, as the page says it: {@code 42 s}, {@code 3 min 5 s}, {@code 2 h 10 min}, {@code 3 d 4 h}. */
    static String span(Duration duration) {
        long s = Math.max(0, Math.round(duration.toMillis() / 1000.0));
        if (s < 60) {
            return s + " s";
        }
        long m = s / 60;
        if (m < 60) {
            return m + " min " + (s % 60) + " s";
        }
        long h = m / 60;
        if (h < 48) {
            return h + " h " + (m % 60) + " min";
        }
        return (h / 24) + " d " + (h % 24) + " h";
    }

    /** Text as HTML: safe in an element and in a quoted attribute. */
    static String esc(String text) {
        StringBuilder out = new StringBuilder(text.length() + 16);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                default -> out.append(c);
            }
        }
        return out.toString();
    }
}
