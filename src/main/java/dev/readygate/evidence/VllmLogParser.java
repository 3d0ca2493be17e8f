package dev.readygate.evidence;

import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Reads the {@link LogEvent}s readygate cares about from vLLM log lines (reference §4.5, §5.4, §6), tolerating the
 * differences between versions: the {@code (EngineCore_DP0 pid=N)} prefix or none, a {@code [file.py:123]} source,
 * the older {@code file.py:123]} or none, a timestamp or none (uvicorn's {@code INFO:     ...} lines), ANSI colours,
 * a CRI log prefix, number formats and extra spaces.
 *
 * <p>Each event's phrase must open the line's message (after the prefix), except the daemon's READY marker, which
 * may appear anywhere: text that vLLM echoes from requests cannot pose as an engine event that way. Parsing is pure
 * apart from reading the clock to infer the timestamp's year, cheap for the lines that match nothing (a substring
 * check before any regular expression), and never throws: a line it cannot read is no event.
 */
final class VllmLogParser {

    private static final String NUMBER = "(-?(?:\\d[\\d,]{0,30}(?:\\.\\d{0,30})?|\\.\\d{1,30}))";

    private static final String SECONDS = "\\s*(?:seconds|secs?|s)\\b";

    private static final Pattern ANSI_ESCAPE = Pattern.compile("\u001B\\[[0-9;?]{0,32}[A-Za-z]");

    /**
     * Everything before the message, each part optional: a CRI prefix ({@code 2026-11-30T12:05:20.1Z stdout F}),
     * the process ({@code (APIServer pid=7)}), the level ({@code INFO}, uvicorn's {@code INFO:}), the timestamp and
     * the source ({@code [api_server.py:1839]}, or {@code api_server.py:1839]} before vLLM 0.8).
     */
    private static final Pattern HEADER =
            Pattern.compile("(?:\\d{4}-\\d{2}-\\d{2}T[0-9:.]{1,30}(?:Z|[+-]\\d{2}:?\\d{2})?"
                    + "\\s+(?:stdout|stderr)\\s+[FP]\\s+)?"
                    + "\\s*(?:\\((?<process>[^()]{0,80}?)\\s*pid=(?<pid>\\d{1,9})(?:,[^()]{0,80})?\\)\\s*)?"
                    + "(?:(?<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?::|\\s)\\s*)?"
                    + "(?:(?<month>\\d{2})-(?<day>\\d{2})\\s+(?<hour>\\d{2}):(?<minute>\\d{2}):(?<second>\\d{2})"
                    + "(?:[.,](?<fraction>\\d{1,9}))?\\s+)?"
                    + "(?:\\[?[\\w.\\-/<>]{1,120}:\\d{1,7}]\\s*)?");

    private static final List<Rule> RULES = List.of(
            rule(
                    "version",
                    "vLLM\\s+(?:API\\s+)?server\\s+version:?\\s*v?(\\d[\\w.+-]{0,60})",
                    (m, line, o) -> new LogEvent.ServerVersion(o.at(), o.process(), o.pid(), version(m.group(1)))),
            rule(
                    "Initializing",
                    "Initializing\\s+an?\\s+(?:V\\d\\s+)?LLM\\s+engine\\s*\\(v?(\\d[\\w.+-]{0,60})\\)",
                    (m, line, o) -> new LogEvent.ServerVersion(o.at(), o.process(), o.pid(), version(m.group(1)))),
            rule("non-default", "non-default\\s+args\\s*:\\s*", (m, line, o) -> {
                String args = line.substring(m.end()).strip();
                return args.isEmpty() ? null : new LogEvent.NonDefaultArgs(o.at(), o.process(), o.pid(), args);
            }),
            rule(
                    "weights",
                    "Loading\\s+weights\\s+took\\s+" + NUMBER + SECONDS,
                    (m, line, o) -> new LogEvent.LoadingWeights(o.at(), o.process(), o.pid(), decimal(m.group(1)))),
            rule(
                    "loading",
                    "Model\\s+loading\\s+took\\s+" + NUMBER + "\\s*Gi?B(?:\\s+memory)?\\s+and\\s+" + NUMBER + SECONDS,
                    (m, line, o) -> new LogEvent.ModelLoading(
                            o.at(), o.process(), o.pid(), decimal(m.group(1)), decimal(m.group(2)))),
            rule(
                    "tensors",
                    "Mapped\\s+(\\d[\\d,]{0,15})\\s+tensors\\s+from\\s+the\\s+weight\\s+cache\\s+daemon"
                            + "(?:\\s*\\(\\s*([\\w-]{1,40})\\s+mode\\s*\\))?",
                    (m, line, o) -> {
                        long tensors = integer(m.group(1));
                        String mode = m.group(2) != null ? m.group(2) : "unknown";
                        return tensors > Integer.MAX_VALUE
                                ? null
                                : new LogEvent.MappedFromCache(o.at(), o.process(), o.pid(), (int) tensors, mode);
                    }),
            rule(
                    "outside",
                    "Weights\\s+are\\s+held\\s+outside\\s+this\\s+process\\s*:?\\s*",
                    (m, line, o) -> new LogEvent.WeightsHeldOutside(
                            o.at(),
                            o.process(),
                            o.pid(),
                            line.substring(m.end()).strip())),
            rule(
                    "unusable",
                    "Weight\\s+cache\\s+unusable\\s*\\(",
                    (m, line, o) ->
                            new LogEvent.CacheFallback(o.at(), o.process(), o.pid(), fallbackReason(line, m.end()))),
            rule(
                    "IPC",
                    "Weight\\s+cache\\s+IPC\\s+loading\\s+failed",
                    (m, line, o) -> new LogEvent.CacheFallback(
                            o.at(), o.process(), o.pid(), "Weight cache IPC loading failed")),
            rule(
                    "become",
                    "(?:[\\w.]{1,120}:\\s*)?(Weight\\s+cache\\s+daemon\\s+did\\s+not\\s+become\\s+ready)",
                    (m, line, o) -> new LogEvent.CacheWaitTimeout(
                            o.at(),
                            o.process(),
                            o.pid(),
                            line.substring(m.start(1)).strip())),
            new Rule(
                    "aemon",
                    true,
                    Pattern.compile("Weight\\s+cache\\s+daemon\\s+ready\\b", Pattern.CASE_INSENSITIVE),
                    true,
                    (m, line, o) -> new LogEvent.DaemonReady(o.at(), o.process(), o.pid())),
            rule(
                    "Available",
                    "Available\\s+KV\\s+cache\\s+memory\\s*:\\s*" + NUMBER + "\\s*Gi?B",
                    (m, line, o) -> new LogEvent.AvailableKvCache(o.at(), o.process(), o.pid(), decimal(m.group(1)))),
            rule("KV", "(?:GPU\\s+)?KV\\s+cache\\s+size\\s*:\\s*(\\d[\\d,]{0,30})\\s*tokens", (m, line, o) -> {
                long tokens = integer(m.group(1));
                return tokens < 0 ? null : new LogEvent.KvCacheSize(o.at(), o.process(), o.pid(), tokens);
            }),
            rule(
                    "init",
                    "init\\s+engine\\s*\\([^)]{0,200}\\)\\s*took\\s+" + NUMBER + SECONDS,
                    (m, line, o) -> new LogEvent.InitEngine(o.at(), o.process(), o.pid(), decimal(m.group(1)))),
            rule(
                    "Starting",
                    "Starting\\s+vLLM\\s+(?:API\\s+)?server\\b(?:\\s+\\d{1,6})?(?:\\s+on\\s+(\\S.*))?",
                    (m, line, o) -> {
                        String url = m.group(1) == null ? null : m.group(1).strip();
                        return new LogEvent.ServerStarting(o.at(), o.process(), o.pid(), url);
                    }),
            rule(
                    "startup",
                    "Application\\s+startup\\s+complete",
                    (m, line, o) -> new LogEvent.ApplicationStartup(o.at(), o.process(), o.pid())),
            rule(
                    "Engine",
                    "EngineCore\\s+encountered\\s+a\\s+fatal\\s+error|Engine\\s+failed,\\s*terminating\\s+server"
                            + "|(?:[\\w]{1,60}\\.){0,10}EngineDeadError\\b",
                    (m, line, o) -> new LogEvent.EngineFatal(
                            o.at(),
                            o.process(),
                            o.pid(),
                            line.substring(m.regionStart()).strip())));

    private final Clock clock;

    /** @param clock now, to infer the year of vLLM's year-less timestamps */
    public VllmLogParser(Clock clock) {
        this.clock = clock;
    }

    /** The event {@code line} reports, or {@code null} when it reports none of them (or cannot be read). */
    public @Nullable LogEvent parse(String line) {
        try {
            String text =
                    line.indexOf('\u001B') >= 0 ? ANSI_ESCAPE.matcher(line).replaceAll("") : line;
            Header header = null;
            for (Rule rule : RULES) {
                if (!rule.mayMatch(text)) {
                    continue;
                }
                if (header == null) {
                    header = header(text);
                }
                Matcher matcher = rule.pattern().matcher(text).region(header.messageStart(), text.length());
                if (rule.anywhere() ? matcher.find() : matcher.lookingAt()) {
                    LogEvent event = rule.event().create(matcher, text, new Origin(header, clock));
                    if (event != null) {
                        return event;
                    }
                }
            }
            return null;
        } catch (RuntimeException ex) {
            // The patterns are built not to throw; a line that still trips one is no event, not a failed tail.
            return null;
        }
    }

    private static Header header(String text) {
        Matcher matcher = HEADER.matcher(text);
        if (!matcher.lookingAt()) {
            return new Header(skipSpaces(text, 0), null, null, null, null, null, null, null, null);
        }
        return new Header(
                skipSpaces(text, matcher.end()),
                matcher.group("process"),
                matcher.group("pid"),
                matcher.group("month"),
                matcher.group("day"),
                matcher.group("hour"),
                matcher.group("minute"),
                matcher.group("second"),
                matcher.group("fraction"));
    }

    private static int skipSpaces(String text, int from) {
        int i = from;
        while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
            i++;
        }
        return i;
    }

    /** Between the first {@code (} after "unusable" and the last {@code ); falling back}: reasons nest brackets. */
    private static String fallbackReason(String line, int start) {
        int end = line.lastIndexOf("); falling back");
        if (end < start) {
            end = line.lastIndexOf(')');
        }
        if (end < start) {
            end = line.length();
        }
        return line.substring(start, end).strip();
    }

    private static String version(String version) {
        int end = version.length();
        while (end > 1 && version.charAt(end - 1) == '.') {
            end--;
        }
        return version.substring(0, end);
    }

    private static double decimal(String number) {
        return Double.parseDouble(number.replace(",", ""));
    }

    /** The number, or -1 when it does not fit a {@code long}. */
    private static long integer(String number) {
        try {
            return Long.parseLong(number.replace(",", ""));
        } catch (NumberFormatException ex) {
            return -1;
        }
    }

    private static Rule rule(String anchor, String regex, EventFactory event) {
        return new Rule(anchor, false, Pattern.compile(regex), false, event);
    }

    /**
     * One event's recognition: {@code anchor} is a word every matching line contains (checked before the pattern);
     * the pattern must open the message unless {@code anywhere}.
     */
    private record Rule(String anchor, boolean ignoreCase, Pattern pattern, boolean anywhere, EventFactory event) {

        boolean mayMatch(String text) {
            if (!ignoreCase) {
                return text.contains(anchor);
            }
            for (int i = 0; i + anchor.length() <= text.length(); i++) {
                if (text.regionMatches(true, i, anchor, 0, anchor.length())) {
                    return true;
                }
            }
            return false;
        }
    }

    @FunctionalInterface
    private interface EventFactory {
        /** The event, or null when the match turns out not to be one (a number too large). */
        @Nullable
        LogEvent create(Matcher matcher, String line, Origin origin);
    }

    /** The raw parts of a line's prefix, and where its message starts. */
    private record Header(
            int messageStart,
            @Nullable String process,
            @Nullable String pid,
            @Nullable String month,
            @Nullable String day,
            @Nullable String hour,
            @Nullable String minute,
            @Nullable String second,
            @Nullable String fraction) {}

    /** What an event says about its line's origin, read from the header when an event is built. */
    private record Origin(Header header, Clock clock) {

        @Nullable
        String process() {
            String process = header.process();
            return process == null || process.isBlank() ? null : process.strip();
        }

        @Nullable
        Integer pid() {
            String pid = header.pid();
            return pid == null ? null : Integer.valueOf(pid);
        }

        /** The timestamp in the year that puts it closest to now (logs cross New Year); UTC, as vLLM's are. */
        @Nullable
        Instant at() {
            if (header.month() == null
                    || header.day() == null
                    || header.hour() == null
                    || header.minute() == null
                    || header.second() == null) {
                return null;
            }
            int month = Integer.parseInt(header.month());
            int day = Integer.parseInt(header.day());
            int hour = Integer.parseInt(header.hour());
            int minute = Integer.parseInt(header.minute());
            int second = Integer.parseInt(header.second());
            if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
                return null;
            }
            int nanos = nanos(header.fraction());
            Instant now = clock.instant();
            int year = now.atZone(ZoneOffset.UTC).getYear();
            Instant closest = null;
            for (int candidateYear = year - 1; candidateYear <= year + 1; candidateYear++) {
                if (day > YearMonth.of(candidateYear, month).lengthOfMonth()) {
                    continue;
                }
                Instant candidate = LocalDateTime.of(candidateYear, month, day, hour, minute, second, nanos)
                        .toInstant(ZoneOffset.UTC);
                if (closest == null || distance(candidate, now) < distance(closest, now)) {
                    closest = candidate;
                }
            }
            return closest;
        }

        private static int nanos(@Nullable String fraction) {
            if (fraction == null) {
                return 0;
            }
            StringBuilder digits = new StringBuilder(fraction);
            while (digits.length() < 9) {
                digits.append('0');
            }
            return Integer.parseInt(digits.toString());
        }

        private static long distance(Instant a, Instant b) {
            return Math.abs(a.getEpochSecond() - b.getEpochSecond());
        }
    }
}
