export interface User {
  id: string;
  email: string;
  name: string;
  role: "admin" | "analyst" | "viewer";
}

export interface Order {
  id: string;
  customer: string;
  total: number;
  status: "pending" | "paid" | "shipped" | "refunded";
  createdAt: string;
  region: string;
}

export interface MetricPoint {
  date: string;
  revenue: number;
  orders: number;
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  pageSize: number;
}

export type SortDirection = "asc" | "desc";
