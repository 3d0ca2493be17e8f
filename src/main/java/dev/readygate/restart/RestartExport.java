package dev.readygate.restart;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The restart history's exports ({@code /status/restarts.json}, {@code /status/restarts.csv}), streamed: memory stays
 * bounded whatever the history's size. The history's files are opened and indexed first (the place of each kept
 * record, about 200 bytes each, {@code RestartHistory.export()}: 4 MiB for the default ceiling's 19,000 records); then the body is written record by record,
 * each read again from its line, rendered and handed on as its own buffer, as fast as the client takes them
 * (backpressure: a slow client holds the reading back, not the heap). A query picks which records: {@code since} (an
 * instant: records of engine starts at or after it; or a record id: the records after that one) and {@code limit}
 * (at most that many, oldest first; {@link Streamed#continueAfter()} says where the next page starts). Records readygate
 * keeps but could not write (the state directory degraded, or held by another readygate) are exported from memory in
 * their place, and counted ({@link Streamed#fromMemory()}).
 */
public final class RestartExport {

    private static final DataBufferFactory buffers = DefaultDataBufferFactory.sharedInstance;
    private static final Pattern RECORD_ID = Pattern.compile("[A-Za-z0-9._-]{1,128}");

    private final RestartHistory history;
    private final Scheduler blocking;

    /** The two formats, as each frames its records. */
    public enum Format {
        /** A JSON array of the history's record objects. */
        JSON("[", ",", "]"),
        /** RFC 4180 CSV: a header line, then one row per record. */
        CSV(RestartRecordView.csvHeaderLine(), "", "");

        private final String prefix;
        private final String separator;
        private final String suffix;

        Format(String prefix, String separator, String suffix) {
            this.prefix = prefix;
            this.separator = separator;
            this.suffix = suffix;
        }
    }

    /**
     * Which records an export holds.
     *
     * @param since records of engine starts at or after this instant; null: from the oldest kept
     * @param after records after the one with this id (in the history's order); null: from the oldest kept
     * @param limit at most this many, oldest first
     */
    public record Query(@Nullable Instant since, @Nullable String after, int limit) {

        /** Every record. */
        public static final Query ALL = new Query(null, null, Integer.MAX_VALUE);

        public Query {
            if (limit < 1) {
                throw new IllegalArgumentException("limit must be at least 1 (was " + limit + ")");
            }
        }

        /**
         * A query from the request's parameters.
         *
         * @param since an ISO-8601 instant ({@code 2026-11-30T12:00:00Z}) or a record id; null or blank for none
         * @param limit a positive number; null for no limit
         * @throws IllegalArgumentException naming the parameter when one is not valid
         */
        public static Query of(@Nullable String since, @Nullable String limit) {
            int max = Integer.MAX_VALUE;
            if (limit != null && !limit.isBlank()) {
                try {
                    max = Integer.parseInt(limit.strip());
                } catch (NumberFormatException ex) {
                    throw new IllegalArgumentException("limit must be a positive number (was " + limit + ")");
                }
                if (max < 1) {
                    throw new IllegalArgumentException("limit must be at least 1 (was " + limit + ")");
                }
            }
            if (since == null || since.isBlank()) {
                return new Query(null, null, max);
            }
            String value = since.strip();
            if (Character.isDigit(value.charAt(0))
                    && value.toUpperCase(Locale.ROOT).endsWith("Z")) {
                try {
                    return new Query(Instant.parse(value), null, max);
                } catch (DateTimeParseException ex) {
                    throw new IllegalArgumentException(
                            "since must be an ISO-8601 instant such as 2026-11-30T12:00:00Z, or a record id (was "
                                    + value + ")");
                }
            }
            if (!RECORD_ID.matcher(value).matches()) {
                throw new IllegalArgumentException(
                        "since must be an ISO-8601 instant such as 2026-11-30T12:00:00Z, or a record id");
            }
            return new Query(null, value, max);
        }
    }

    /**
     * An export, decided before its first byte.
     *
     * @param records how many records the body holds
     * @param continueAfter when {@code limit} left records out: the id of the body's last record, to pass as the next
     *     page's {@code since}; null when the body holds the rest of the history
     * @param body the body, written record by record as it is read; it reads the files only when subscribed
     * @param fromMemory how many of the body's records readygate keeps in memory only: their write to the state
     *     directory failed (it is degraded, or another readygate holds it), so the history's files lack them
     */
    public record Streamed(int records, @Nullable String continueAfter, Flux<DataBuffer> body, int fromMemory) {}

    /** One record of an export: a place in the history's files, or a record kept only in memory. */
    private record Row(
            HistoryExport.@Nullable Location location,
            @Nullable RestartRecord kept) {

        String id() {
            return kept != null
                    ? kept.id()
                    : java.util.Objects.requireNonNull(location).id();
        }

        Instant engineStart() {
            return kept != null
                    ? kept.when().engineStart()
                    : java.util.Objects.requireNonNull(location).engineStart();
        }

        @Nullable
        RestartRecord read(HistoryExport export) {
            return kept != null ? kept : export.read(java.util.Objects.requireNonNull(location));
        }
    }

    /**
     * The history's records in its order, each once: a record whose last version is kept only in memory takes its
     * file place (or comes last when the files never held it).
     */
    private static List<Row> rows(HistoryExport export, List<RestartRecord> unwritten) {
        Map<String, RestartRecord> inMemory = new LinkedHashMap<>();
        unwritten.forEach(record -> inMemory.put(record.id(), record));
        List<Row> rows = new ArrayList<>();
        for (HistoryExport.Location location : export.locations()) {
            RestartRecord kept = inMemory.remove(location.id());
            rows.add(kept != null ? new Row(null, kept) : new Row(location, null));
        }
        inMemory.values().forEach(record -> rows.add(new Row(null, record)));
        return rows;
    }

    /** Thrown when a query's {@code since} names a record the history does not hold. */
    public static final class UnknownRecordException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        UnknownRecordException(String id) {
            super("since names no record the history keeps (" + id + "): it was rotated away, or never there;"
                    + " use an instant instead");
        }
    }

    /**
     * @param history the history to export
     * @param blocking where the files are read (never an event loop)
     */
    public RestartExport(RestartHistory history, Scheduler blocking) {
        this.history = history;
        this.blocking = blocking;
    }

    /** Opens and indexes the history (off the event loop), and gives the body that streams the chosen records. */
    public Mono<Streamed> export(Format format, Query query) {
        Function<RestartRecord, byte[]> render = switch (format) {
            case JSON -> history::json;
            case CSV -> record -> new RestartRecordView(record).csvLine().getBytes(StandardCharsets.UTF_8);
        };
        List<RestartRecord> unwritten = history.unwritten();
        return Mono.fromCallable(history::export).subscribeOn(blocking).flatMap(export -> {
            try {
                return Mono.just(streamed(export, unwritten, format, query, render));
            } catch (RuntimeException ex) {
                export.close();
                return Mono.error(ex);
            }
        });
    }

    /**
     * The comparison of the chosen records ({@code since} and {@code limit} as for the exports), each read from its line
     * and folded in as it is read (off the event loop): only the figures stay in memory, never the records.
     */
    public Mono<RestartComparison> comparison(Query query) {
        return Mono.fromCallable(() -> {
                    List<RestartRecord> unwritten = history.unwritten();
                    try (HistoryExport export = history.export()) {
                        RestartComparison.Builder comparison = new RestartComparison.Builder();
                        for (Row row : chosen(rows(export, unwritten), query).records()) {
                            RestartRecord record = row.read(export);
                            if (record != null) {
                                comparison.add(record);
                            }
                        }
                        return comparison.build();
                    }
                })
                .subscribeOn(blocking);
    }

    /** The locations a query picks, and where the next page would start. */
    private record Chosen(List<Row> records, @Nullable String continueAfter) {}

    private static Chosen chosen(List<Row> all, Query query) {
        int from = 0;
        if (query.after() != null) {
            from = -1;
            for (int i = 0; i < all.size(); i++) {
                if (all.get(i).id().equals(query.after())) {
                    from = i + 1;
                    break;
                }
            }
            if (from < 0) {
                throw new UnknownRecordException(query.after());
            }
        }
        List<Row> chosen = all.subList(from, all.size());
        if (query.since() != null) {
            Instant since = query.since();
            chosen = chosen.stream()
                    .filter(row -> !row.engineStart().isBefore(since))
                    .toList();
        }
        String continueAfter = null;
        if (chosen.size() > query.limit()) {
            chosen = chosen.subList(0, query.limit());
            continueAfter = chosen.getLast().id();
        }
        return new Chosen(chosen, continueAfter);
    }

    private Streamed streamed(
            HistoryExport export,
            List<RestartRecord> unwritten,
            Format format,
            Query query,
            Function<RestartRecord, byte[]> render) {
        Chosen chosen = chosen(rows(export, unwritten), query);
        String continueAfter = chosen.continueAfter();
        List<Row> records = chosen.records();
        int fromMemory =
                (int) records.stream().filter(row -> row.kept() != null).count();
        Flux<DataBuffer> body = Flux.using(
                () -> export,
                opened -> Flux.concat(
                        Mono.fromSupplier(() -> buffer(format.prefix.getBytes(StandardCharsets.UTF_8))),
                        rows(opened, records, format, render),
                        Mono.fromSupplier(() -> buffer(format.suffix.getBytes(StandardCharsets.UTF_8)))),
                HistoryExport::close);
        return new Streamed(records.size(), continueAfter, body.subscribeOn(blocking), fromMemory);
    }

    /** One buffer per record, read and rendered only when the client asks for more. */
    private static Flux<DataBuffer> rows(
            HistoryExport export, List<Row> records, Format format, Function<RestartRecord, byte[]> render) {
        byte[] separator = format.separator.getBytes(StandardCharsets.UTF_8);
        return Flux.generate(() -> new int[] {0, 0}, (state, sink) -> {
            // state[0]: the next record; state[1]: how many were written (a separator goes before each but
            // the first).
            while (state[0] < records.size()) {
                RestartRecord record = records.get(state[0]++).read(export);
                if (record == null) {
                    continue;
                }
                byte[] row = render.apply(record);
                DataBuffer buffer = buffers.allocateBuffer(row.length + separator.length);
                if (state[1]++ > 0) {
                    buffer.write(separator);
                }
                sink.next(buffer.write(row));
                return state;
            }
            sink.complete();
            return state;
        });
    }

    private static DataBuffer buffer(byte[] bytes) {
        return buffers.wrap(bytes);
    }
}
