package demo.ledger;

import java.util.ArrayList;
import java.util.List;

/** A ledger of signed amounts with a running balance. */
public class Ledger {
    private final List<Long> entries = new ArrayList<>();

    /** Kinds of entry a ledger accepts. */
    public enum Kind { CREDIT, DEBIT }

    /** Adds an entry; debits are stored as negative amounts. */
    public void add(Kind kind, long amount) {
        if (amount < 0) {
            throw new IllegalArgumentException("amount must not be negative");
        }
        entries.add(kind == Kind.CREDIT ? amount : -amount);
    }

    /** The sum of every entry. */
    public long balance() {
        long total = 0;
        for (long entry : entries) {
            total += entry;
        }
        return total;
    }

    interface Listener {
        void changed(Ledger ledger);
    }
}
