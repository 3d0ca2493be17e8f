package dev.readygate.evidence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.evidence.LogEvent.ApplicationStartup;
import dev.readygate.evidence.LogEvent.LoadingWeights;
import dev.readygate.simulator.RunningSimulator;
import dev.readygate.simulator.StartupPath;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.reactivestreams.Subscription;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.util.unit.DataSize;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * Following real files on disk as a shared volume holds them. The tail logs when it starts following a file or waits
 * for one; tests that need the tail in place before they write wait for that line rather than for time.
 */
@ExtendWith(OutputCaptureExtension.class)
class LogTailTests {

    static final Duration POLL = Duration.ofMillis(10);

    @TempDir
    Path dir;

    Path file;

    final List<String> lines = new CopyOnWriteArrayList<>();

    final List<String> threads = new CopyOnWriteArrayList<>();

    final List<Disposable> subscriptions = new CopyOnWriteArrayList<>();

    @AfterEach
    void cancel() {
        subscriptions.forEach(Disposable::dispose);
    }

    LogTail tail(DataSize maxLineLength) {
        file = dir.resolve("engine.log");
        return new LogTail(file, POLL, maxLineLength, Schedulers.boundedElastic());
    }

    LogTail tail() {
        return tail(DataSize.ofKilobytes(64));
    }

    void follow(LogTail tail, boolean fromStart) {
        subscriptions.add(tail.lines(fromStart)
                .doOnNext(line -> threads.add(Thread.currentThread().getName()))
                .subscribe(lines::add));
    }

    void awaitLines(String... expected) {
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(lines).containsExactly(expected));
    }

    static void append(Path path, String text) {
        append(path, text.getBytes(StandardCharsets.UTF_8));
    }

    static void append(Path path, byte[] bytes) {
        try {
            Files.write(path, bytes, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    static void awaitLogged(CapturedOutput output, String text) {
        await().atMost(Duration.ofSeconds(5)).until(() -> output.getOut().contains(text));
    }

    @Test
    void linesWhenLinesAreAppendedEmitsThoseAppendedAfterSubscription(CapturedOutput output) {
        LogTail tail = tail();
        append(file, "before\n");
        follow(tail, false);
        awaitLogged(output, "Following " + file + " from offset 7");
        append(file, "one\ntwo\n");
        append(file, "three\n");
        awaitLines("one", "two", "three");
        assertThat(threads).allMatch(thread -> thread.startsWith("boundedElastic-"));
    }

    @Test
    void catchUpWhenLinesWereAppendedSinceTheLastPollEmitsThemBeforeCompleting() {
        file = dir.resolve("engine.log");
        LogTail tail = new LogTail(file, Duration.ofHours(1), DataSize.ofKilobytes(64), Schedulers.boundedElastic());
        append(file, "one\n");
        follow(tail, true);
        awaitLines("one");
        append(file, "two\n");
        tail.catchUp().block(Duration.ofSeconds(5));
        assertThat(lines).containsExactly("one", "two");
    }

    @Test
    void linesWhenReadFromTheStartEmitsTheWholeFile() {
        LogTail tail = tail();
        append(file, "one\ntwo\n");
        follow(tail, true);
        awaitLines("one", "two");
        append(file, "three\n");
        awaitLines("one", "two", "three");
    }

    @Test
    void linesWhenALineIsWrittenInPartsEmitsItOnceComplete() {
        LogTail tail = tail();
        append(file, "hel");
        follow(tail, true);
        await().during(Duration.ofMillis(150)).atMost(Duration.ofSeconds(2)).until(lines::isEmpty);
        append(file, "lo\nwor");
        awaitLines("hello");
        append(file, "ld\n");
        awaitLines("hello", "world");
    }

    @Test
    void linesWhenLinesEndInCrLfDropsTheCarriageReturn() {
        LogTail tail = tail();
        append(file, "one\r\ntwo\r\nlone\rcarriage return\n\r\n");
        follow(tail, true);
        awaitLines("one", "two", "lone\rcarriage return", "");
    }

    @Test
    void linesWhenBytesAreNotUtf8ReplacesThem() {
        LogTail tail = tail();
        append(file, new byte[] {'a', (byte) 0xFF, 'b', '\n', (byte) 0xC3, (byte) 0xA9, '\n', (byte) 0xE2, '\n'});
        follow(tail, true);
        awaitLines("a\uFFFDb", "\u00e9", "\uFFFD");
    }

    @Test
    void linesWhenALineIsLongerThanTheLimitKeepsItsStartAndDropsTheRest() {
        LogTail tail = tail(DataSize.ofBytes(16));
        append(file, "0123456789abcdefDROPPED\nshort\n0123456789ABCDEF");
        follow(tail, true);
        awaitLines("0123456789abcdef", "short");
        // The rest of an overlong line arrives later: still dropped up to its end.
        append(file, "DROPPED TOO\n");
        // A cut in the middle of a character (the euro sign takes bytes 16 to 18) drops the whole character.
        append(file, "aaaaaaaaaaaaaaa\u20ac\nnext\n");
        awaitLines("0123456789abcdef", "short", "0123456789ABCDEF", "aaaaaaaaaaaaaaa", "next");
    }

    @Test
    void linesWhenAnOverlongLineSpansManyReadsKeepsMemoryToTheLimit() {
        LogTail tail = tail(DataSize.ofBytes(10));
        append(file, "x".repeat(1_000_000) + "\nend\n");
        follow(tail, true);
        awaitLines("x".repeat(10), "end");
    }

    @Test
    void linesWhenTheFileIsRotatedReadsTheOldFileToItsEndThenTheNewOne() throws IOException {
        LogTail tail = tail();
        append(file, "a\nb\n");
        follow(tail, true);
        awaitLines("a", "b");
        append(file, "c\n");
        Path rotated = Files.move(file, dir.resolve("engine.log.1"));
        // The writer still holds the old file open for a moment.
        append(rotated, "c2\n");
        append(file, "d\n");
        awaitLines("a", "b", "c", "c2", "d");
        append(file, "e\n");
        awaitLines("a", "b", "c", "c2", "d", "e");
    }

    @Test
    void linesWhenTheRotatedFileEndsInAnUnfinishedLineEmitsItBeforeTheNewFile() throws IOException {
        LogTail tail = tail();
        append(file, "a\nunfinished");
        follow(tail, true);
        awaitLines("a");
        Files.move(file, dir.resolve("engine.log.1"));
        append(file, "b\n");
        awaitLines("a", "unfinished", "b");
    }

    @Test
    void linesWhenTheFileIsTruncatedInPlaceReadsItAgainFromItsStart() throws IOException {
        LogTail tail = tail();
        append(file, "first line\nsecond line\n");
        follow(tail, true);
        awaitLines("first line", "second line");
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.truncate(0);
        }
        append(file, "third\n");
        awaitLines("first line", "second line", "third");
    }

    @Test
    void linesWhenTheFileIsCreatedLateReadsItFromItsStart(CapturedOutput output) {
        LogTail tail = tail();
        follow(tail, false);
        awaitLogged(output, "Waiting for " + file + " to appear");
        append(file, "one\ntwo\n");
        awaitLines("one", "two");
    }

    @Test
    void linesWhenTheFileIsDeletedAndCreatedAgainReadsTheNewOne() throws IOException {
        LogTail tail = tail();
        append(file, "old\n");
        follow(tail, true);
        awaitLines("old");
        Files.delete(file);
        append(file, "new\n");
        awaitLines("old", "new");
    }

    @Test
    void linesWhenTheSubscriberRequestsLittleEmitsNoMore() {
        LogTail tail = tail();
        append(file, "line\n".repeat(10_000));
        BaseSubscriber<String> slow = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription subscription) {
                request(3);
            }

            @Override
            protected void hookOnNext(String line) {
                lines.add(line);
            }
        };
        subscriptions.add(slow);
        tail.lines(true).subscribe(slow);
        await().during(Duration.ofMillis(150)).atMost(Duration.ofSeconds(2)).until(() -> lines.size() == 3);
        slow.request(2);
        await().during(Duration.ofMillis(150)).atMost(Duration.ofSeconds(2)).until(() -> lines.size() == 5);
    }

    @Test
    void linesWhenTheSchedulerMustNotBlockFailsBeforeTouchingTheFile() {
        file = dir.resolve("engine.log");
        append(file, "one\n");
        StepVerifier.create(new LogTail(file, POLL, DataSize.ofKilobytes(64), Schedulers.parallel()).lines(true))
                .expectErrorSatisfies(error -> assertThat(error)
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("Schedulers.boundedElastic()"))
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void linesWhenCancelledClosesTheFile() throws IOException {
        Path descriptors = Path.of("/proc/self/fd");
        assumeThat(descriptors).as("Linux /proc").isDirectory();
        LogTail tail = tail();
        append(file, "one\n");
        follow(tail, true);
        awaitLines("one");
        Path real = file.toRealPath();
        assertThat(openDescriptors(descriptors, real)).isEqualTo(1);
        subscriptions.forEach(Disposable::dispose);
        await().atMost(Duration.ofSeconds(5)).until(() -> openDescriptors(descriptors, real) == 0);
    }

    static long openDescriptors(Path descriptors, Path target) throws IOException {
        try (Stream<Path> links = Files.list(descriptors)) {
            return links.filter(link -> {
                        try {
                            return Files.readSymbolicLink(link).equals(target);
                        } catch (IOException | UnsupportedOperationException ex) {
                            // The descriptor closed while listing, or is not a link to a path.
                            return false;
                        }
                    })
                    .count();
        }
    }

    @Test
    void linesWhenTheSimulatorRotatesAndTruncatesItsLogMissNoStart() throws Exception {
        int adminPort = RunningSimulator.freePort();
        Path workDir = dir.resolve("simulator");
        try (RunningSimulator running =
                RunningSimulator.serving(workDir, "admin-port=" + adminPort, "preload.enabled=false")) {
            VllmLogParser parser = new VllmLogParser(Clock.systemUTC());
            List<LogEvent> events = new CopyOnWriteArrayList<>();
            subscriptions.add(new LogTail(
                            workDir.resolve("engine.log"), POLL, DataSize.ofKilobytes(64), Schedulers.boundedElastic())
                    .lines(true)
                    .mapNotNull(parser::parse)
                    .subscribe(events::add));
            awaitStarts(events, 1);
            admin(adminPort, "/admin/log?action=rotate");
            running.restartAndAwait(StartupPath.COLD);
            awaitStarts(events, 2);
            assertThat(workDir.resolve("engine.log.1")).exists();
            admin(adminPort, "/admin/log?action=truncate");
            running.restartAndAwait(StartupPath.COLD);
            awaitStarts(events, 3);
            assertThat(events).filteredOn(LoadingWeights.class::isInstance).hasSize(3);
        }
    }

    static void awaitStarts(List<LogEvent> events, int starts) {
        await().atMost(Duration.ofSeconds(10))
                .until(() -> events.stream()
                                .filter(ApplicationStartup.class::isInstance)
                                .count()
                        == starts);
    }

    static void admin(int port, String pathAndQuery) throws IOException, InterruptedException {
        try (HttpClient client = HttpClient.newHttpClient()) {
            HttpResponse<String> response = client.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery))
                            .POST(HttpRequest.BodyPublishers.noBody())
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        }
    }
}
