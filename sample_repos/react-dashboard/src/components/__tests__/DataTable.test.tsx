import { fireEvent, render, screen, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";

import { Column, DataTable, sortRows } from "../DataTable";

interface Row {
  id: string;
  name: string;
  amount: number;
}

const rows: Row[] = Array.from({ length: 23 }, (_, i) => ({
  id: `r${i + 1}`,
  name: `Item ${String.fromCharCode(65 + (i % 26))}`,
  amount: (i * 37) % 100,
}));

const columns: Column<Row>[] = [
  { key: "name", header: "Name", sortable: true },
  { key: "amount", header: "Amount", sortable: true, align: "right" },
];

function bodyRows() {
  const [, tbody] = screen.getAllByRole("rowgroup");
  return within(tbody).getAllByRole("row");
}

describe("sortRows", () => {
  it("sorts numbers numerically and puts empty values last", () => {
    const data = [{ v: 10 }, { v: undefined }, { v: 2 }] as { v?: number }[];
    expect(sortRows(data, "v", "asc").map((r) => r.v)).toEqual([2, 10, undefined]);
    expect(sortRows(data, "v", "desc").map((r) => r.v)).toEqual([10, 2, undefined]);
  });
});

describe("DataTable", () => {
  it("shows one page of rows and paginates", () => {
    render(<DataTable rows={rows} columns={columns} rowKey={(r) => r.id} pageSize={10} />);
    expect(bodyRows()).toHaveLength(10);
    fireEvent.click(screen.getByRole("button", { name: "3" }));
    expect(bodyRows()).toHaveLength(3);
    expect(screen.getByRole("button", { name: "Next" })).toBeDisabled();
  });

  it("toggles sort direction when a header is clicked twice", () => {
    render(<DataTable rows={rows} columns={columns} rowKey={(r) => r.id} pageSize={50} />);
    const header = screen.getByRole("button", { name: /Amount/ });
    fireEvent.click(header);
    expect(within(bodyRows()[0]).getByText("0")).toBeInTheDocument();
    fireEvent.click(header);
    expect(within(bodyRows()[0]).getByText("99")).toBeInTheDocument();
  });

  it("renders the empty message and calls onRowClick", () => {
    const onRowClick = vi.fn();
    const { rerender } = render(
      <DataTable rows={[]} columns={columns} rowKey={(r) => r.id} emptyMessage="Nothing here" />,
    );
    expect(screen.getByText("Nothing here")).toBeInTheDocument();
    rerender(<DataTable rows={rows.slice(0, 2)} columns={columns} rowKey={(r) => r.id} onRowClick={onRowClick} />);
    fireEvent.click(bodyRows()[1]);
    expect(onRowClick).toHaveBeenCalledWith(rows[1]);
  });
});
