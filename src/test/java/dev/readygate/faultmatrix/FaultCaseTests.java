package dev.readygate.faultmatrix;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.simulator.Fault;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The fault matrix covers every fault the simulator can inject: a fault added to the simulator needs its row. */
class FaultCaseTests {

    @Test
    void everySimulatorFaultHasItsRow() {
        assertThat(Arrays.stream(FaultCase.values()).map(FaultCase::name))
                .as("FaultCase needs a row (its reason, how readygate sees it, how it clears) for each simulator Fault")
                .containsAll(Arrays.stream(Fault.values()).map(Fault::name).toList());
    }
}
