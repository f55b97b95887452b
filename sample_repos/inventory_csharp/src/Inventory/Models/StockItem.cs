using System;
using System.Collections.Generic;

namespace Inventory.Models;

/// <summary>The state of an item on the shelves.</summary>
public enum StockStatus
{
    InStock,
    LowStock,
    OutOfStock,
    Discontinued,
}

/// <summary>
/// An amount of money in one currency, rounded to cents.
/// </summary>
public readonly record struct Money(decimal Amount, string Currency)
{
    public static Money Zero(string currency) => new(0m, currency);

    /// <summary>
    /// Adds two amounts of the same currency and fails on a currency mismatch.
    /// </summary>
    public Money Plus(Money other)
    {
        if (other.Currency != Currency)
        {
            throw new InvalidOperationException($"cannot add {other.Currency} to {Currency}");
        }
        return new Money(Math.Round(Amount + other.Amount, 2), Currency);
    }
}

/// <summary>
/// A product kept in stock: its SKU, how many units are on hand and the reorder level.
/// </summary>
public class StockItem
{
    private readonly List<StockMovement> _movements = new();

    public StockItem(string sku, string name, int onHand, int reorderLevel)
    {
        Sku = sku;
        Name = name;
        OnHand = onHand;
        ReorderLevel = reorderLevel;
    }

    public string Sku { get; }

    public string Name { get; }

    public int OnHand { get; private set; }

    public int ReorderLevel { get; set; }

    public bool Discontinued { get; private set; }

    /// <summary>
    /// Whether the quantity on hand has fallen to the reorder level or below it.
    /// </summary>
    public bool NeedsReorder => !Discontinued && OnHand <= ReorderLevel;

    public IReadOnlyList<StockMovement> Movements => _movements;

    /// <summary>
    /// Classifies the item as in stock, low, out of stock or discontinued.
    /// </summary>
    public StockStatus Status()
    {
        if (Discontinued)
        {
            return StockStatus.Discontinued;
        }
        if (OnHand == 0)
        {
            return StockStatus.OutOfStock;
        }
        return NeedsReorder ? StockStatus.LowStock : StockStatus.InStock;
    }

    /// <summary>
    /// Records a movement of units in or out and updates the quantity on hand.
    /// </summary>
    /// <exception cref="InvalidOperationException">When more units leave than are on hand.</exception>
    public void Apply(StockMovement movement)
    {
        var next = OnHand + movement.Quantity;
        if (next < 0)
        {
            throw new InvalidOperationException(
                $"{Sku}: cannot remove {-movement.Quantity} units, only {OnHand} on hand");
        }
        OnHand = next;
        _movements.Add(movement);
    }

    /// <summary>Stops selling the item; stock on hand stays until it is written off.</summary>
    public void Discontinue() => Discontinued = true;
}

/// <summary>A change in stock: positive for goods received, negative for goods shipped.</summary>
public record StockMovement(string Sku, int Quantity, string Reason, DateTimeOffset At);
