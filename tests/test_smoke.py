def test_list_posts_empty(client, key):
    response = client.get("/api/v1/posts", headers=key.headers)
    assert response.status_code == 200
    assert response.json() == {
        "success": True,
        "data": [],
        "pagination": {"totalItems": 0, "totalPages": 0, "hasNextPage": False, "limit": 20, "offset": 0},
    }
