package dev.readygate.gpu;

import static dev.readygate.gpu.Fixtures.H200_UUID;
import static dev.readygate.gpu.Fixtures.MIB;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;
import reactor.core.scheduler.Schedulers;

/** Scrapes a DCGM exporter served over real HTTP on loopback. */
class DcgmExporterReaderTests {

    static final Instant AT = Instant.parse("2026-11-30T11:45:12Z");

    static final Duration VERIFY = Duration.ofSeconds(10);

    HttpServer server;

    volatile int status = 200;

    volatile String body = Fixtures.resource("/dcgm/metrics.txt");

    @BeforeEach
    void serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/metrics", exchange -> {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    DcgmExporterReader reader(List<String> uuids, DataSize maxBody) {
        return new DcgmExporterReader(
                URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/metrics"),
                uuids,
                Duration.ofSeconds(2),
                maxBody,
                HttpClient.newHttpClient(),
                Clock.fixed(AT, ZoneOffset.UTC),
                Schedulers.boundedElastic());
    }

    @Test
    void readReturnsFramebufferMemoryOfTheSelectedGpuWithoutProcesses() {
        GpuReading reading =
                reader(List.of(H200_UUID), DataSize.ofMegabytes(1)).read().block(VERIFY);

        assertThat(reading).isInstanceOfSatisfying(GpuReading.Success.class, success -> {
            assertThat(success.snapshot().at()).isEqualTo(AT);
            assertThat(success.snapshot().gpus()).singleElement().satisfies(gpu -> {
                assertThat(gpu.uuid()).isEqualTo(H200_UUID);
                assertThat(gpu.usedBytes()).isEqualTo(13435 * MIB);
                assertThat(gpu.freeBytes()).isEqualTo(129722 * MIB);
            });
            assertThat(success.snapshot().processes()).isEmpty();
        });
    }

    @Test
    void readWhenTheGpuIsNotExportedIsNoMatchingGpu() {
        GpuReading reading =
                reader(List.of("GPU-nope"), DataSize.ofMegabytes(1)).read().block(VERIFY);

        assertThat(reading)
                .isInstanceOfSatisfying(
                        GpuReading.Failure.class,
                        failure -> assertThat(failure.reason()).isEqualTo(GpuReading.Reason.NO_MATCHING_GPU));
    }

    @Test
    void readWhenTheExporterAnswersAnErrorIsHttpStatus() {
        status = 503;

        GpuReading reading = reader(List.of(), DataSize.ofMegabytes(1)).read().block(VERIFY);

        assertThat(reading).isInstanceOfSatisfying(GpuReading.Failure.class, failure -> {
            assertThat(failure.reason()).isEqualTo(GpuReading.Reason.HTTP_STATUS);
            assertThat(failure.detail()).endsWith("answered HTTP 503");
        });
    }

    @Test
    void readWhenTheExporterSendsTooMuchIsUnexpectedOutput() {
        GpuReading reading = reader(List.of(), DataSize.ofKilobytes(1)).read().block(VERIFY);

        assertThat(reading)
                .isInstanceOfSatisfying(
                        GpuReading.Failure.class,
                        failure -> assertThat(failure.reason()).isEqualTo(GpuReading.Reason.UNEXPECTED_OUTPUT));
    }

    @Test
    void readWhenTheExporterIsGoneIsUnreachable() {
        DcgmExporterReader reader = reader(List.of(), DataSize.ofMegabytes(1));
        server.stop(0);

        GpuReading reading = reader.read().block(VERIFY);

        assertThat(reading)
                .isInstanceOfSatisfying(
                        GpuReading.Failure.class,
                        failure -> assertThat(failure.reason()).isEqualTo(GpuReading.Reason.UNREACHABLE));
    }

    @Test
    void readWhenTheExporterPrintsGarbageIsUnexpectedOutput() {
        body = "DCGM_FI_DEV_FB_USED{gpu=\"0\" 12\n";

        GpuReading reading = reader(List.of(), DataSize.ofMegabytes(1)).read().block(VERIFY);

        assertThat(reading)
                .isInstanceOfSatisfying(
                        GpuReading.Failure.class,
                        failure -> assertThat(failure.reason()).isEqualTo(GpuReading.Reason.UNEXPECTED_OUTPUT));
    }
}
