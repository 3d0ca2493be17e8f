package dev.readygate.benchmark;

import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * readygate killed with {@code kill -9} at random moments while its engine restarts again and again (issue 24, item
 * 10): the simulator (in this JVM, {@value #LOAD_TIME} loads) is restarted along the cold path as soon as it served
 * for a random 0.5 to 3 s; readygate runs as its own JVM from the jar on one state directory and is killed
 * {@value #KILLS_PROPERTY} times (default 20), each a random 0 to 10 s after it first judged the engine, and started
 * again on the same directory at once. The moments come from a seeded {@link Random} ({@code
 * benchmark.killed-readygate.seed}, printed; default the clock). A last readygate then watches two more starts, is
 * stopped, and the history it and its predecessors wrote is checked ({@link Check}): no torn line, no start recorded
 * twice, and every engine start that began while a readygate was watching (after its first judgement of the engine,
 * before its kill), and that it saw begin (its {@code /readyz} said {@code down} during it), recorded as an engine
 * start ({@code firstSeen} false). A start the next readygate could not tell from a later one (the engine restarted
 * again before it looked) is reported apart.
 */
final class KilledReadygateStage {

    static final String KILLS_PROPERTY = "benchmark.killed-readygate.kills";
    /**
     * Whether readygate tails the engine's log ({@code readygate.evidence.engine-log}; default false): the log's first
     * line dates a start while the engine still loads, which a killed readygate's journal keeps.
     */
    static final String ENGINE_LOG_PROPERTY = "benchmark.killed-readygate.engine-log";
    /** The engine's load: longer than readygate's own restart here, as a vLLM load is, so most kills leave it loading. */
    static final String LOAD_TIME = "8s";

    /** How far past a log-dated start's whole second the process may have started. */
    static final Duration LOG_SECOND = Duration.ofMillis(999);

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final Path jar;
    private final Path dir;
    private final int kills = Integer.getInteger(KILLS_PROPERTY, 20);
    private final long seed = Long.getLong("benchmark.killed-readygate.seed", System.currentTimeMillis());
    private final boolean engineLog = Boolean.getBoolean(ENGINE_LOG_PROPERTY);
    final Map<String, Object> results = new LinkedHashMap<>();
    final List<String> failures = new ArrayList<>();

    /** One engine start, as the harness began it: the restart was asked at {@code asked}. */
    record EngineRun(int number, Instant asked) {}

    /** One readygate's life: judging the engine from {@code watching} until {@code killed} (null: stopped at the end). */
    record Life(int number, Instant watching, @Nullable Instant killed) {}

    /** readygate {@code life} said the engine was {@code down} since {@code since} (its own sighting of a stop). */
    record Sighting(int life, Instant since) {}

    /** One history line: its id, when the start began, whether first seen, its outcome, or torn (unparseable). */
    record Line(String id, @Nullable Instant engineStart, boolean firstSeen, String outcome, boolean journaled) {}

    KilledReadygateStage(Path jar, Path dir) {
        this.jar = jar.toAbsolutePath();
        this.dir = dir;
    }

    void run(NoiseMonitor noise) {
        Benchmark.progress("killed readygate: seed %d, %d kills", seed, kills);
        results.put("seed", seed);
        results.put("kills", kills);
        results.put("engine_log", engineLog);
        Random random = new Random(seed);
        List<EngineRun> runs = new CopyOnWriteArrayList<>();
        List<Life> lives = new ArrayList<>();
        List<Sighting> sightings = new CopyOnWriteArrayList<>();
        Path state = dir.resolve("state");
        Instant began = Instant.now();
        try (RunningSimulator engine =
                RunningSimulator.serving(dir.resolve("engine"), "load-time=" + LOAD_TIME, "log-to-stdout=false")) {
            runs.add(new EngineRun(1, began));
            Restarter restarter = new Restarter(engine, runs, new Random(seed + 1));
            Thread restarts = Thread.ofPlatform()
                    .daemon()
                    .name("killed-readygate-restarts")
                    .start(restarter);
            noise.begin("killed readygate");
            for (int life = 1; life <= kills + 1; life++) {
                boolean last = life == kills + 1;
                Readygate readygate = new Readygate(
                        life,
                        engine.baseUrl(),
                        engineLog ? engine.workDir().resolve("engine.log") : null,
                        state,
                        noise,
                        sightings);
                try {
                    Instant watching = readygate.awaitWatching();
                    if (last) {
                        int until = runs.size() + 2;
                        Stack.await(() -> runs.size() >= until, Duration.ofSeconds(120));
                        restarter.stop();
                        restarts.join(30_000);
                        // The last start judged and recorded: its line is written once it is ready.
                        Instant lastAsked = runs.getLast().asked();
                        Stack.await(
                                () -> lines(state).stream()
                                        .anyMatch(line -> line.engineStart() != null
                                                && !line.engineStart().isBefore(lastAsked)
                                                && line.outcome().equals("ready")),
                                Duration.ofSeconds(120));
                        lives.add(new Life(life, watching, null));
                    } else {
                        Stack.pause(Duration.ofMillis(random.nextLong(10_000)));
                        Instant killed = Instant.now();
                        readygate.kill();
                        lives.add(new Life(life, watching, killed));
                        Benchmark.progress(
                                "killed readygate %d at %s, %s into engine start %d",
                                life,
                                killed,
                                Duration.between(runs.getLast().asked(), killed),
                                runs.getLast().number());
                    }
                } finally {
                    readygate.stop();
                }
            }
            noise.end();
            Check check = Check.of(runs, lives, sightings, lines(state));
            results.putAll(check.figures());
            if (!check.broken().isEmpty()) {
                failures.addAll(check.broken());
            }
            Benchmark.progress("killed readygate: %s", results);
        } catch (IOException ex) {
            failures.add(ex.toString());
            Benchmark.progress("killed readygate failed: %s", ex);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            failures.add("interrupted");
        }
        results.put("failures", failures);
    }

    /** The history's lines, oldest first: the rotated files ({@code .N} ... {@code .1}), then the file. */
    static List<Line> lines(Path state) {
        List<Line> out = new ArrayList<>();
        if (!Files.isDirectory(state)) {
            return out;
        }
        try (var files = Files.list(state)) {
            List<Path> history = files.filter(f -> f.getFileName().toString().matches("restarts\\.jsonl(\\.\\d+)?"))
                    .sorted(java.util.Comparator.comparingInt(KilledReadygateStage::rotation)
                            .reversed())
                    .toList();
            for (Path file : history) {
                for (String text : Files.readAllLines(file)) {
                    out.add(parse(text));
                }
            }
        } catch (IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
        return out;
    }

    private static int rotation(Path file) {
        String name = file.getFileName().toString();
        return name.equals("restarts.jsonl") ? 0 : Integer.parseInt(name.substring(name.lastIndexOf('.') + 1));
    }

    /** One history line; a torn line (not one JSON object with an id) has a null start and outcome {@code torn}. */
    static Line parse(String text) {
        try {
            JsonNode node = JSON.readTree(text);
            if (!node.isObject() || !node.path("id").isString()) {
                return new Line(text, null, false, "torn", false);
            }
            boolean journaled = node.path("evidence")
                    .valueStream()
                    .anyMatch(line -> line.asString().startsWith("journal:"));
            Instant engineStart = Instant.parse(node.path("engineStart").asString());
            // A log's clock has whole seconds: the process started within the second its header names, so the start is
            // matched to the engine start under way at that second's end (the restart asked within it).
            if (node.path("engineStartSource").asString().equals("log")) {
                engineStart = engineStart.plus(LOG_SECOND);
            }
            return new Line(
                    node.path("id").asString(),
                    engineStart,
                    node.path("firstSeen").booleanValue(),
                    node.path("outcome").asString(),
                    journaled);
        } catch (RuntimeException ex) {
            return new Line(text, null, false, "torn", false);
        }
    }

    /**
     * The checks, a pure function of what happened: each history line is assigned to the engine start whose span
     * (from its restart being asked until the next one was) holds its {@code engineStart}.
     *
     * @param figures what is reported
     * @param broken what broke the promise (empty: kept)
     */
    record Check(Map<String, Object> figures, List<String> broken) {

        /** A record may date a start a little before its restart was asked: process start times are whole ms. */
        static final Duration EARLY = Duration.ofMillis(100);

        static Check of(List<EngineRun> runs, List<Life> lives, List<Sighting> sightings, List<Line> lines) {
            List<String> broken = new ArrayList<>();
            Map<String, Object> figures = new LinkedHashMap<>();
            long torn =
                    lines.stream().filter(line -> line.engineStart() == null).count();
            if (torn > 0) {
                broken.add(torn + " torn line(s)");
            }
            // A start may be appended more than once (in progress, then when it ends): the last line with an id wins.
            Map<String, Line> records = new LinkedHashMap<>();
            lines.stream().filter(line -> line.engineStart() != null).forEach(line -> {
                records.remove(line.id());
                records.put(line.id(), line);
            });
            int watched = 0;
            int seenBegin = 0;
            int engineStarts = 0;
            int journaled = 0;
            int firstSeenOnly = 0;
            List<String> lost = new ArrayList<>();
            List<String> merged = new ArrayList<>();
            List<String> duplicated = new ArrayList<>();
            for (int i = 0; i < runs.size(); i++) {
                EngineRun run = runs.get(i);
                Instant from = run.asked().minus(EARLY);
                Instant to = i + 1 < runs.size() ? runs.get(i + 1).asked().minus(EARLY) : Instant.MAX;
                List<Line> mine = records.values().stream()
                        .filter(line -> line.engineStart() != null
                                && !line.engineStart().isBefore(from)
                                && line.engineStart().isBefore(to))
                        .toList();
                if (mine.size() > 1) {
                    duplicated.add("start " + run.number() + ": " + mine.size() + " records");
                }
                boolean asEngineStart = mine.stream().anyMatch(line -> !line.firstSeen());
                if (asEngineStart) {
                    engineStarts++;
                }
                if (mine.stream().anyMatch(Line::journaled)) {
                    journaled++;
                }
                if (!asEngineStart && !mine.isEmpty()) {
                    firstSeenOnly++;
                }
                Life life = lives.stream()
                        .filter(l -> !run.asked().isBefore(l.watching())
                                && (l.killed() == null || run.asked().isBefore(l.killed())))
                        .findFirst()
                        .orElse(null);
                if (life == null) {
                    continue;
                }
                watched++;
                boolean saw = sightings.stream()
                        .anyMatch(s -> s.life() == life.number()
                                && !s.since().isBefore(run.asked())
                                && s.since().isBefore(to));
                if (!saw) {
                    continue;
                }
                seenBegin++;
                if (asEngineStart) {
                    continue;
                }
                String what = "start " + run.number() + " (asked " + run.asked() + ", readygate " + life.number()
                        + (life.killed() == null
                                ? ""
                                : " killed "
                                        + Duration.between(run.asked(), life.killed())
                                                .toMillis() + " ms into it")
                        + "): " + (mine.isEmpty() ? "no record" : "recorded only as first seen");
                if (life.killed() != null && restartedBeforeTheNextLooked(runs, i, lives, life)) {
                    merged.add(what);
                } else {
                    lost.add(what);
                }
            }
            if (!duplicated.isEmpty()) {
                broken.add("starts recorded more than once: " + duplicated);
            }
            if (!lost.isEmpty()) {
                broken.add("starts readygate saw begin and never recorded as engine starts: " + lost);
            }
            figures.put("engine_starts", runs.size());
            figures.put(
                    "readygates_killed",
                    lives.stream().filter(l -> l.killed() != null).count());
            figures.put("history_lines", lines.size());
            figures.put("records", records.size());
            figures.put("torn_lines", torn);
            figures.put("began_while_watched", watched);
            figures.put("seen_begin", seenBegin);
            figures.put("recorded_as_engine_starts", engineStarts);
            figures.put("recorded_through_the_journal", journaled);
            figures.put("recorded_only_as_first_seen", firstSeenOnly);
            figures.put("lost", lost);
            figures.put("lost_to_a_later_restart", merged);
            figures.put("duplicated", duplicated);
            return new Check(figures, broken);
        }

        /**
         * Whether the engine was asked to restart again after start {@code i} and before the readygate after
         * {@code life} first judged it: the next readygate found a later process, which nothing tells apart from the
         * journaled one when the killed readygate never had the engine's own dating of it.
         */
        static boolean restartedBeforeTheNextLooked(List<EngineRun> runs, int i, List<Life> lives, Life life) {
            Instant nextWatching = lives.stream()
                    .filter(l -> l.number() == life.number() + 1)
                    .map(Life::watching)
                    .findFirst()
                    .orElse(Instant.MAX);
            return i + 1 < runs.size() && runs.get(i + 1).asked().isBefore(nextWatching);
        }
    }

    /** Restarts the engine along the cold path as soon as it served for a random 0.5 to 3 s, until stopped. */
    private static final class Restarter implements Runnable {

        private final RunningSimulator engine;
        private final List<EngineRun> runs;
        private final Random random;
        private volatile boolean stopped;

        Restarter(RunningSimulator engine, List<EngineRun> runs, Random random) {
            this.engine = engine;
            this.runs = runs;
            this.random = random;
        }

        void stop() {
            stopped = true;
        }

        @Override
        public void run() {
            while (!stopped) {
                Stack.await(() -> engine.listeningSince() != null, Duration.ofSeconds(30));
                Stack.pause(Duration.ofMillis(500 + random.nextLong(2_500)));
                if (stopped) {
                    return;
                }
                Instant asked = Instant.now();
                runs.add(new EngineRun(runs.size() + 1, asked));
                engine.restart(StartupPath.COLD);
                Stack.await(() -> engine.listeningSince() == null, Duration.ofSeconds(5));
            }
        }
    }

    /** One readygate JVM from the jar on the stage's state directory, its {@code /readyz} polled every 50 ms. */
    private final class Readygate {

        private final int life;
        private final int port = FootprintStage.freePort();
        private final Process process;
        private final NoiseMonitor noise;
        private final List<Sighting> sightings;
        private final Thread poller;
        private volatile @Nullable Instant watching;
        private volatile boolean closed;

        Readygate(
                int life,
                String engineUrl,
                @Nullable Path engineLog,
                Path state,
                NoiseMonitor noise,
                List<Sighting> sightings)
                throws IOException {
            this.life = life;
            this.noise = noise;
            this.sightings = sightings;
            Files.createDirectories(dir);
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(FootprintStage.SMALL);
            if (Files.exists(jar)) {
                command.addAll(List.of("-jar", jar.toString()));
            } else {
                command.addAll(
                        List.of("-cp", System.getProperty("java.class.path"), "dev.readygate.ReadygateApplication"));
            }
            command.addAll(List.of(
                    "--server.port=" + port,
                    "--server.address=127.0.0.1",
                    "--readygate.engine.base-url=" + engineUrl,
                    "--readygate.state-dir=" + state,
                    // The engine restarts every few seconds on purpose: no restart loop to hold.
                    "--readygate.restart.loop-hold=0s"));
            if (engineLog != null) {
                command.add("--readygate.evidence.engine-log=" + engineLog);
            }
            results.put("readygate", Files.exists(jar) ? "the jar" : "the harness's classpath (no jar built)");
            this.process = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(
                            dir.resolve("readygate-" + life + ".log").toFile()))
                    .start();
            noise.own(process.pid());
            this.poller = Thread.ofPlatform()
                    .daemon()
                    .name("killed-readygate-poll-" + life)
                    .start(this::poll);
        }

        Instant awaitWatching() throws IOException {
            if (!Stack.await(() -> watching != null, Duration.ofSeconds(180))) {
                throw new IOException("readygate " + life + " did not judge the engine within 180 s (see "
                        + dir.resolve("readygate-" + life + ".log") + ")");
            }
            return watching;
        }

        private void poll() {
            try (HttpConnection connection = new HttpConnection("127.0.0.1", port, 1000)) {
                while (!closed) {
                    try {
                        JsonNode engine = JSON.readTree(connection
                                        .get("/readyz", "application/json")
                                        .body())
                                .path("components")
                                .path("engine")
                                .path("details");
                        String state = engine.path("state").asString("");
                        if (!state.isEmpty() && !state.equals("starting") && watching == null) {
                            watching = Instant.now();
                        }
                        if (state.equals("down") && watching != null) {
                            Instant since = Instant.parse(engine.path("since").asString());
                            if (sightings.stream()
                                    .noneMatch(
                                            s -> s.life() == life && s.since().equals(since))) {
                                sightings.add(new Sighting(life, since));
                            }
                        }
                    } catch (IOException | RuntimeException ex) {
                        // Not serving yet, or killed.
                    }
                    Stack.pause(Duration.ofMillis(50));
                }
            }
        }

        /** {@code kill -9}. */
        void kill() throws InterruptedException {
            closed = true;
            noise.ownEnding(process.pid());
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }

        /** SIGTERM (nothing when killed). */
        void stop() throws InterruptedException {
            closed = true;
            poller.join(5_000);
            if (process.isAlive()) {
                noise.ownEnding(process.pid());
                process.destroy();
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            }
        }
    }
}
