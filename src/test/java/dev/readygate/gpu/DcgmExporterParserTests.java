package dev.readygate.gpu;

import static dev.readygate.gpu.Fixtures.H200_UUID;
import static dev.readygate.gpu.Fixtures.MIB;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DcgmExporterParserTests {

    private static final Instant AT = Instant.parse("2026-11-30T11:45:12Z");

    @Test
    void parseWhenExporterListsTwoGpusReturnsTheirMemory() {
        GpuSnapshot snapshot =
                NvidiaSmiParserTests.success(DcgmExporterParser.parse(Fixtures.resource("/dcgm/metrics.txt"), AT));

        assertThat(snapshot.at()).isEqualTo(AT);
        assertThat(snapshot.driverVersion()).isEqualTo("580.159.04");
        assertThat(snapshot.processes()).isEmpty();
        assertThat(snapshot.gpus())
                .containsExactly(
                        new GpuMemory(
                                H200_UUID,
                                0,
                                "NVIDIA H200",
                                (13435 + 129722 + 616) * MIB,
                                13435 * MIB,
                                129722 * MIB,
                                616 * MIB),
                        new GpuMemory(
                                "GPU-0b2e7c41-93d8-4a5f-b1e6-2c8d7f9a4e10",
                                1,
                                "NVIDIA H200",
                                (143156 + 616) * MIB,
                                0,
                                143156 * MIB,
                                616 * MIB));
    }

    @Test
    void parseWhenReservedIsNotExportedTotalsUsedAndFree() {
        String text = """
                DCGM_FI_DEV_FB_USED{gpu="3",UUID="GPU-a",modelName="NVIDIA H200",Hostname="n"} 10 1764503112000
                DCGM_FI_DEV_FB_FREE{gpu="3",UUID="GPU-a",modelName="NVIDIA H200",Hostname="n"} 90
                """;

        GpuSnapshot snapshot = NvidiaSmiParserTests.success(DcgmExporterParser.parse(text, AT));

        assertThat(snapshot.gpus())
                .containsExactly(new GpuMemory("GPU-a", 3, "NVIDIA H200", 100 * MIB, 10 * MIB, 90 * MIB, null));
        assertThat(snapshot.driverVersion()).isNull();
    }

    @Test
    void parseWhenLabelValueHasEscapesReadsIt() {
        String text = """
                DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",modelName="H\\"200\\\\x",Hostname="n"} 1
                DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a",modelName="H\\"200\\\\x",Hostname="n"} 2
                """;

        GpuSnapshot snapshot = NvidiaSmiParserTests.success(DcgmExporterParser.parse(text, AT));

        assertThat(snapshot.gpus().getFirst().name()).isEqualTo("H\"200\\x");
    }

    @Test
    void parseWhenFreeIsMissingReturnsUnexpectedOutput() {
        String text = "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"} 1\n";

        assertThat(DcgmExporterParser.parse(text, AT))
                .isEqualTo(NvidiaSmiParserTests.unexpected("GPU-a: no DCGM_FI_DEV_FB_FREE sample"));
    }

    @Test
    void parseWhenSampleLineIsMalformedReturnsUnexpectedOutputNamingLine() {
        String text = "# HELP x\nDCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"} many\n";

        assertThat(DcgmExporterParser.parse(text, AT))
                .isEqualTo(NvidiaSmiParserTests.unexpected("line 2: not a number: many"));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-a\"} 30\n",
                "DCGM_FI_DEV_FB_USED{gpu=\"0\"} 1\n",
                "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\" 1\n",
                "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"} 1.5\n",
                "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"} 1\nDCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"} 2\n"
            })
    void parseWhenNoUsableFramebufferSampleReturnsUnexpectedOutput(String text) {
        assertThat(DcgmExporterParser.parse(text, AT))
                .isInstanceOfSatisfying(
                        GpuReading.Failure.class,
                        failure -> assertThat(failure.reason()).isEqualTo(GpuReading.Reason.UNEXPECTED_OUTPUT));
    }
}
