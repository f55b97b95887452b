import { useMemo, useState } from "react";

export interface PaginationOptions {
  total: number;
  initialPage?: number;
  pageSize?: number;
  siblings?: number;
}

export type PageToken = number | "ellipsis";

/**
 * Computes the list of page buttons to show: first and last page, the
 * current page with a few neighbours, and ellipses for the gaps.
 */
export function pageRange(current: number, pageCount: number, siblings = 1): PageToken[] {
  if (pageCount <= 5 + siblings * 2) {
    return Array.from({ length: pageCount }, (_, i) => i + 1);
  }
  const left = Math.max(2, current - siblings);
  const right = Math.min(pageCount - 1, current + siblings);
  const tokens: PageToken[] = [1];
  if (left > 2) tokens.push("ellipsis");
  for (let p = left; p <= right; p++) tokens.push(p);
  if (right < pageCount - 1) tokens.push("ellipsis");
  tokens.push(pageCount);
  return tokens;
}

export function usePagination({ total, initialPage = 1, pageSize: initialSize = 20, siblings = 1 }: PaginationOptions) {
  const [page, setPage] = useState(initialPage);
  const [pageSize, setPageSize] = useState(initialSize);
  const pageCount = Math.max(1, Math.ceil(total / pageSize));
  const current = Math.min(page, pageCount);

  const range = useMemo(() => pageRange(current, pageCount, siblings), [current, pageCount, siblings]);

  return {
    page: current,
    pageSize,
    pageCount,
    range,
    offset: (current - 1) * pageSize,
    hasPrev: current > 1,
    hasNext: current < pageCount,
    goTo: (p: number) => setPage(Math.min(Math.max(1, p), pageCount)),
    next: () => setPage((p) => Math.min(p + 1, pageCount)),
    prev: () => setPage((p) => Math.max(p - 1, 1)),
    changePageSize: (size: number) => {
      setPageSize(size);
      setPage(1);
    },
  };
}
