package dev.readygate.gpu;

import static dev.readygate.gpu.Fixtures.H200_UUID;
import static dev.readygate.gpu.Fixtures.MIB;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class NvidiaSmiParserTests {

    private static final Instant AT = Instant.parse("2026-11-30T11:45:12Z");

    /** The fields of {@code query-gpu-nounits.csv}, {@code query-gpu-after.csv} and the {@code [gpu]} lines. */
    private static final List<String> FIVE_FIELDS =
            List.of("index", "uuid", "memory.total", "memory.used", "memory.free");

    private static final String NOTHING = "";

    @Test
    void parseCsvWhenQueryHasHeaderAndUnitsReadsEveryColumn() {
        GpuSnapshot snapshot = success(NvidiaSmiParser.parseCsv(
                Fixtures.nvidiaSmi("query-gpu.csv"),
                NvidiaSmiParser.GPU_FIELDS,
                Fixtures.nvidiaSmi("apps-idle.csv"),
                NvidiaSmiParser.APP_FIELDS,
                AT));

        assertThat(snapshot.at()).isEqualTo(AT);
        assertThat(snapshot.driverVersion()).isEqualTo("580.159.04");
        assertThat(snapshot.gpus())
                .containsExactly(new GpuMemory(H200_UUID, 0, "NVIDIA H200", 143771 * MIB, 0, 143156 * MIB, 616 * MIB));
        assertThat(snapshot.processes()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"query-gpu-nounits.csv", "query-gpu-after.csv"})
    void parseCsvWhenNoHeaderNoUnitsAndOptionalColumnsMissingUsesQueriedFields(String fixture) {
        GpuSnapshot snapshot = success(NvidiaSmiParser.parseCsv(
                Fixtures.nvidiaSmi(fixture), FIVE_FIELDS, NOTHING, NvidiaSmiParser.APP_FIELDS, AT));

        assertThat(snapshot.driverVersion()).isNull();
        assertThat(snapshot.gpus())
                .containsExactly(new GpuMemory(H200_UUID, 0, "", 143771 * MIB, 0, 143156 * MIB, null));
    }

    @ParameterizedTest
    @ValueSource(strings = {"apps-idle.csv", "apps-after.csv"})
    void parseCsvWhenComputeAppsIsHeaderOnlyFindsNoProcess(String fixture) {
        GpuSnapshot snapshot = success(NvidiaSmiParser.parseCsv(
                Fixtures.nvidiaSmi("query-gpu-nounits.csv"),
                FIVE_FIELDS,
                Fixtures.nvidiaSmi(fixture),
                NvidiaSmiParser.APP_FIELDS,
                AT));

        assertThat(snapshot.processes()).isEmpty();
    }

    @Test
    void parseCsvWhenIpcLogEngineMappedChargesSharedWeightsToDaemon() {
        GpuSnapshot snapshot = ipcLogStep("engine-mapped");

        assertThat(snapshot.processes())
                .containsExactly(
                        new GpuProcess(560, "python3", H200_UUID, 10760 * MIB),
                        new GpuProcess(598, "/opt/torch/.venv/bin/python3", H200_UUID, 2660 * MIB));
        assertThat(snapshot.gpus().getFirst().usedBytes()).isEqualTo(13435 * MIB);
        assertThat(snapshot.gpus().getFirst().freeBytes()).isEqualTo(129722 * MIB);
    }

    @ParameterizedTest
    @CsvSource({
        "before, 0, 0, 0",
        "daemon-holds-10GiB, 1, 10760, 10769",
        "engine-mapped, 2, 13420, 13435",
        "engine-exited-daemon-alive, 1, 10760, 10769",
        "daemon-freed, 1, 520, 529"
    })
    void parseCsvWhenIpcLogStepReadsItsProcessesAndUse(String step, int processes, long processMib, long usedMib) {
        GpuSnapshot snapshot = ipcLogStep(step);

        assertThat(snapshot.processes()).hasSize(processes);
        assertThat(snapshot.processes().stream()
                        .mapToLong(GpuProcess::usedBytes)
                        .sum())
                .isEqualTo(processMib * MIB);
        assertThat(snapshot.gpus()).singleElement().satisfies(gpu -> {
            assertThat(gpu.uuid()).isEqualTo(H200_UUID);
            assertThat(gpu.totalBytes()).isEqualTo(143771 * MIB);
            assertThat(gpu.usedBytes()).isEqualTo(usedMib * MIB);
        });
    }

    @Test
    void parseCsvWhenValuesAreNotAvailableOrSpacedTreatsThemAsMissing() {
        String csv = "  1 ,  GPU-a ,  [N/A] , [Not Supported] ,  100 MiB ,  40 MiB , 60 MiB ,  [N/A]  \n";

        GpuSnapshot snapshot = success(
                NvidiaSmiParser.parseCsv(csv, NvidiaSmiParser.GPU_FIELDS, NOTHING, NvidiaSmiParser.APP_FIELDS, AT));

        assertThat(snapshot.gpus()).containsExactly(new GpuMemory("GPU-a", 1, "", 100 * MIB, 40 * MIB, 60 * MIB, null));
        assertThat(snapshot.driverVersion()).isNull();
    }

    @Test
    void parseCsvWhenProcessNameHoldsCommasKeepsItWhole() {
        String apps = "77, python3 -c import a, b, GPU-a, 12\n";

        GpuSnapshot snapshot = success(
                NvidiaSmiParser.parseCsv("0, GPU-a, 100, 12, 88\n", FIVE_FIELDS, apps, NvidiaSmiParser.APP_FIELDS, AT));

        assertThat(snapshot.processes())
                .containsExactly(new GpuProcess(77, "python3 -c import a, b", "GPU-a", 12 * MIB));
    }

    @Test
    void parseCsvWhenRequiredValueIsNotAvailableReturnsUnexpectedOutputNamingLineAndColumn() {
        GpuReading reading = NvidiaSmiParser.parseCsv(
                "0, GPU-a, 100, [N/A], 88\n", FIVE_FIELDS, NOTHING, NvidiaSmiParser.APP_FIELDS, AT);

        assertThat(reading).isEqualTo(unexpected("query-gpu line 1: no value for memory.used"));
    }

    @Test
    void parseCsvWhenColumnCountDiffersReturnsUnexpectedOutput() {
        GpuReading reading = NvidiaSmiParser.parseCsv(
                Fixtures.nvidiaSmi("query-gpu-nounits.csv"),
                NvidiaSmiParser.GPU_FIELDS,
                NOTHING,
                NvidiaSmiParser.APP_FIELDS,
                AT);

        assertThat(reading).isInstanceOfSatisfying(GpuReading.Failure.class, failure -> {
            assertThat(failure.reason()).isEqualTo(GpuReading.Reason.UNEXPECTED_OUTPUT);
            assertThat(failure.detail()).startsWith("query-gpu line 1: 5 values for 8 columns");
        });
    }

    @Test
    void parseCsvWhenProcessLineIsGarbageReturnsUnexpectedOutputNamingLine() {
        GpuReading reading = NvidiaSmiParser.parseCsv(
                Fixtures.nvidiaSmi("query-gpu.csv"),
                NvidiaSmiParser.GPU_FIELDS,
                Fixtures.nvidiaSmi("apps-idle.csv") + "abc, python3, " + H200_UUID + ", 10\n",
                NvidiaSmiParser.APP_FIELDS,
                AT);

        assertThat(reading).isEqualTo(unexpected("query-compute-apps line 2 pid: not a number: abc"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "\n\n", "NVIDIA-SMI has failed\n", "0, GPU-a, 12 GiB, 1, 1\n", "0, GPU-a, -1, 1, 1\n"})
    void parseCsvWhenQueryGpuIsNotCsvOfGpusReturnsUnexpectedOutput(String csv) {
        GpuReading reading = NvidiaSmiParser.parseCsv(csv, FIVE_FIELDS, NOTHING, NvidiaSmiParser.APP_FIELDS, AT);

        assertThat(reading)
                .isInstanceOfSatisfying(
                        GpuReading.Failure.class,
                        failure -> assertThat(failure.reason()).isEqualTo(GpuReading.Reason.UNEXPECTED_OUTPUT));
    }

    @Test
    void parseXmlWhenEngineMapsDaemonWeightsChargesThemToDaemon() {
        GpuSnapshot snapshot = success(NvidiaSmiParser.parseXml(Fixtures.nvidiaSmi("xml-engine-mapped.xml"), AT));

        assertThat(snapshot.driverVersion()).isEqualTo("580.159.04");
        assertThat(snapshot.gpus())
                .containsExactly(
                        new GpuMemory(H200_UUID, 0, "NVIDIA H200", 143771 * MIB, 13435 * MIB, 129722 * MIB, 616 * MIB));
        assertThat(snapshot.processes())
                .containsExactly(
                        new GpuProcess(560, "python3", H200_UUID, 10760 * MIB),
                        new GpuProcess(598, "/opt/torch/.venv/bin/python3", H200_UUID, 2660 * MIB));
    }

    @Test
    void parseXmlWhenEngineExitedLeavesOnlyDaemon() {
        GpuSnapshot snapshot =
                success(NvidiaSmiParser.parseXml(Fixtures.nvidiaSmi("xml-engine-exited-daemon-alive.xml"), AT));

        assertThat(snapshot.processes()).containsExactly(new GpuProcess(560, "python3", H200_UUID, 10760 * MIB));
        assertThat(snapshot.gpus().getFirst().usedBytes()).isEqualTo(10769 * MIB);
    }

    @ParameterizedTest
    @CsvSource({
        "query-idle.xml, 0, 0",
        "xml-before.xml, 0, 0",
        "xml-daemon-holds-10GiB.xml, 1, 10769",
        "xml-engine-mapped.xml, 2, 13435",
        "xml-engine-exited-daemon-alive.xml, 1, 10769",
        "xml-daemon-freed.xml, 1, 529"
    })
    void parseXmlWhenRealStepReadsGpuAndProcesses(String fixture, int processes, long usedMib) {
        GpuSnapshot snapshot = success(NvidiaSmiParser.parseXml(Fixtures.nvidiaSmi(fixture), AT));

        assertThat(snapshot.processes()).hasSize(processes);
        assertThat(snapshot.gpus()).singleElement().satisfies(gpu -> {
            assertThat(gpu.totalBytes()).isEqualTo(143771 * MIB);
            assertThat(gpu.usedBytes()).isEqualTo(usedMib * MIB);
            assertThat(gpu.reservedBytes()).isEqualTo(616 * MIB);
        });
    }

    @Test
    void parseXmlWhenDoctypeNamesUnreachableDtdParsesOffline() {
        String xml = Fixtures.nvidiaSmi("xml-before.xml")
                .replace("\"nvsmi_device_v13.dtd\"", "\"http://127.0.0.1:9/nvsmi_device_v13.dtd\"");

        assertThat(NvidiaSmiParser.parseXml(xml, AT)).isInstanceOf(GpuReading.Success.class);
    }

    @Test
    void parseXmlWhenExternalEntityIsDeclaredDoesNotResolveIt() {
        String xml = """
                <?xml version="1.0" ?>
                <!DOCTYPE nvidia_smi_log [<!ENTITY secret SYSTEM "file:///etc/hostname">]>
                <nvidia_smi_log><driver_version>&secret;</driver_version>
                <gpu><uuid>GPU-a</uuid><fb_memory_usage><total>10 MiB</total><used>1 MiB</used><free>9 MiB</free>
                </fb_memory_usage></gpu></nvidia_smi_log>
                """;

        GpuReading reading = NvidiaSmiParser.parseXml(xml, AT);

        assertThat(reading)
                .isInstanceOfSatisfying(
                        GpuReading.Success.class,
                        success ->
                                assertThat(success.snapshot().driverVersion()).isNull());
    }

    @Test
    void parseXmlWhenTruncatedReturnsUnexpectedOutputNamingLine() {
        String xml = Fixtures.nvidiaSmi("xml-engine-mapped.xml").substring(0, 2000);

        GpuReading reading = NvidiaSmiParser.parseXml(xml, AT);

        assertThat(reading).isInstanceOfSatisfying(GpuReading.Failure.class, failure -> {
            assertThat(failure.reason()).isEqualTo(GpuReading.Reason.UNEXPECTED_OUTPUT);
            assertThat(failure.detail()).startsWith("XML line ");
        });
    }

    @Test
    void parseXmlWhenMemoryIsMissingReturnsUnexpectedOutputNamingElement() {
        String xml = Fixtures.nvidiaSmi("xml-engine-mapped.xml").replace("<used>13435 MiB</used>", "");

        assertThat(NvidiaSmiParser.parseXml(xml, AT))
                .isEqualTo(unexpected("<gpu> " + H200_UUID + " <fb_memory_usage>: no <used>"));
    }

    @Test
    void parseXmlWhenProcessMemoryIsNotANumberReturnsUnexpectedOutputNamingPid() {
        String xml = Fixtures.nvidiaSmi("xml-engine-mapped.xml")
                .replace("<used_memory>2660 MiB</used_memory>", "<used_memory>lots</used_memory>");

        assertThat(NvidiaSmiParser.parseXml(xml, AT))
                .isEqualTo(unexpected("<process_info> on " + H200_UUID + " pid 598 <used_memory>: not a number: lots"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "not xml", "<other/>", "<nvidia_smi_log></nvidia_smi_log>"})
    void parseXmlWhenNotNvidiaSmiLogReturnsUnexpectedOutput(String xml) {
        assertThat(NvidiaSmiParser.parseXml(xml, AT))
                .isInstanceOfSatisfying(
                        GpuReading.Failure.class,
                        failure -> assertThat(failure.reason()).isEqualTo(GpuReading.Reason.UNEXPECTED_OUTPUT));
    }

    private static GpuSnapshot ipcLogStep(String step) {
        return success(NvidiaSmiParser.parseCsv(
                Fixtures.ipcLog(step, "gpu"),
                FIVE_FIELDS,
                Fixtures.ipcLog(step, "apps"),
                NvidiaSmiParser.APP_FIELDS,
                AT));
    }

    static GpuSnapshot success(GpuReading reading) {
        assertThat(reading).isInstanceOf(GpuReading.Success.class);
        return ((GpuReading.Success) reading).snapshot();
    }

    static GpuReading unexpected(String detail) {
        return new GpuReading.Failure(GpuReading.Reason.UNEXPECTED_OUTPUT, detail);
    }
}
