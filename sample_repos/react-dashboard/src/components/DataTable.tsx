import { ReactNode, useMemo, useState } from "react";

import { pageRange } from "../hooks/usePagination";
import type { SortDirection } from "../types";

export interface Column<T> {
  key: keyof T & string;
  header: string;
  sortable?: boolean;
  align?: "left" | "right" | "center";
  width?: number | string;
  render?: (row: T) => ReactNode;
}

export interface DataTableProps<T> {
  rows: T[];
  columns: Column<T>[];
  rowKey: (row: T) => string;
  pageSize?: number;
  initialSort?: { key: keyof T & string; direction: SortDirection };
  emptyMessage?: string;
  onRowClick?: (row: T) => void;
  loading?: boolean;
}

/**
 * Orders rows by one column, comparing numbers numerically, dates by time
 * and everything else as locale-aware strings; empty values sort last.
 */
export function sortRows<T>(rows: T[], key: keyof T, direction: SortDirection): T[] {
  const sign = direction === "asc" ? 1 : -1;
  return [...rows].sort((a, b) => {
    const av = a[key] as unknown;
    const bv = b[key] as unknown;
    if (av == null && bv == null) return 0;
    if (av == null) return 1;
    if (bv == null) return -1;
    if (typeof av === "number" && typeof bv === "number") return (av - bv) * sign;
    if (av instanceof Date && bv instanceof Date) return (av.getTime() - bv.getTime()) * sign;
    return String(av).localeCompare(String(bv), undefined, { numeric: true }) * sign;
  });
}

function SortIndicator({ active, direction }: { active: boolean; direction: SortDirection }) {
  if (!active) return <span className="sort-indicator sort-indicator--idle">↕</span>;
  return <span className="sort-indicator">{direction === "asc" ? "▲" : "▼"}</span>;
}

export function DataTable<T>({
  rows,
  columns,
  rowKey,
  pageSize = 10,
  initialSort,
  emptyMessage = "No data",
  onRowClick,
  loading = false,
}: DataTableProps<T>) {
  const [sort, setSort] = useState(initialSort);
  const [page, setPage] = useState(1);

  const sorted = useMemo(() => (sort ? sortRows(rows, sort.key, sort.direction) : rows), [rows, sort]);
  const pageCount = Math.max(1, Math.ceil(sorted.length / pageSize));
  const current = Math.min(page, pageCount);
  const visible = sorted.slice((current - 1) * pageSize, current * pageSize);

  // Clicking the active column flips the direction; a new column starts ascending.
  const toggleSort = (key: keyof T & string) => {
    setSort((prev) => (prev && prev.key === key ? { key, direction: prev.direction === "asc" ? "desc" : "asc" } : { key, direction: "asc" }));
    setPage(1);
  };

  return (
    <div className="data-table" aria-busy={loading}>
      <table>
        <thead>
          <tr>
            {columns.map((col) => (
              <th
                key={col.key}
                style={{ width: col.width, textAlign: col.align ?? "left" }}
                aria-sort={sort?.key === col.key ? (sort.direction === "asc" ? "ascending" : "descending") : "none"}
              >
                {col.sortable ? (
                  <button type="button" className="th-button" onClick={() => toggleSort(col.key)}>
                    {col.header}
                    <SortIndicator active={sort?.key === col.key} direction={sort?.direction ?? "asc"} />
                  </button>
                ) : (
                  col.header
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {visible.length === 0 ? (
            <tr>
              <td colSpan={columns.length} className="data-table__empty">
                {loading ? "Loading…" : emptyMessage}
              </td>
            </tr>
          ) : (
            visible.map((row) => (
              <tr
                key={rowKey(row)}
                className={onRowClick ? "data-table__row--clickable" : undefined}
                onClick={onRowClick ? () => onRowClick(row) : undefined}
              >
                {columns.map((col) => (
                  <td key={col.key} style={{ textAlign: col.align ?? "left" }}>
                    {col.render ? col.render(row) : String(row[col.key] ?? "")}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
      {pageCount > 1 && (
        <nav className="pagination" aria-label="Table pages">
          <button type="button" disabled={current === 1} onClick={() => setPage(current - 1)}>
            Previous
          </button>
          {pageRange(current, pageCount).map((token, i) =>
            token === "ellipsis" ? (
              <span key={`gap-${i}`} className="pagination__gap">
                …
              </span>
            ) : (
              <button
                type="button"
                key={token}
                aria-current={token === current ? "page" : undefined}
                onClick={() => setPage(token)}
              >
                {token}
              </button>
            ),
          )}
          <button type="button" disabled={current === pageCount} onClick={() => setPage(current + 1)}>
            Next
          </button>
        </nav>
      )}
    </div>
  );
}
