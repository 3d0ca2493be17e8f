package dev.readygate.benchmark;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class CpuSplitTests {

    @Test
    void readsTheAllowedCpusAsTheKernelListsThem() {
        assertThat(CpuSplit.allowed(List.of("Name:\tjava", "Cpus_allowed:\t3", "Cpus_allowed_list:\t0-1")))
                .containsExactly(0, 1);
        assertThat(CpuSplit.allowed(List.of("Cpus_allowed_list:\t0-2,5,7-8"))).containsExactly(0, 1, 2, 5, 7, 8);
        assertThat(CpuSplit.allowed(List.of("Name:\tjava"))).isEmpty();
    }

    @Test
    void readygateRunsOnItsCpuAndTheReportSaysWhere() {
        CpuSplit split = new CpuSplit(1, "0", "0,1");

        assertThat(split.wrap(List.of("java", "-jar", "readygate.jar")))
                .containsExactly("taskset", "-c", "1", "java", "-jar", "readygate.jar");
        assertThat(split.describe("readygate", "the load generator and the simulator"))
                .isEqualTo("readygate on CPU 1 alone; the load generator and the simulator on CPU 0");
    }
}
